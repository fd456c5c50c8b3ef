func.func @argmax_dim(%a: tensor<4x8xf32>) {
  %0 = sinter.argmax %a, dim = -1 : tensor<4x8xf32>
  return
}
