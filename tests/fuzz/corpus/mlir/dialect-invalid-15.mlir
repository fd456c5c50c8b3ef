func.func @broadcast_sizes(%a: tensor<3xf32>) {
  %0 = sinter.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<2x4xf32>
  return
}
