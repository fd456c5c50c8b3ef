func.func @broadcast_dims_order(%a: tensor<4x4xf32>) {
  %0 = sinter.broadcast_in_dim %a, dims = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}
