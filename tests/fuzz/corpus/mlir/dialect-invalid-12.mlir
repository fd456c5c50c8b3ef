func.func @broadcast_dims_count(%a: tensor<4xf32>) {
  %0 = sinter.broadcast_in_dim %a, dims = [0, 1] : tensor<4xf32> -> tensor<2x4xf32>
  return
}
