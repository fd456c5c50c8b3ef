func.func @broadcast_dim_range(%a: tensor<4xf32>) {
  %0 = sinter.broadcast_in_dim %a, dims = [2] : tensor<4xf32> -> tensor<2x4xf32>
  return
}
