func.func @broadcast_element_type(%a: tensor<4xf32>) {
  %0 = sinter.broadcast_in_dim %a, dims = [1] : tensor<4xf32> -> tensor<2x4xf16>
  return
}
