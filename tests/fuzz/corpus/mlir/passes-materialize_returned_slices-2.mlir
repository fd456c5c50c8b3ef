func.func @views_that_stay(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %r = sinter.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  return %r : tensor<32xf32>
}
