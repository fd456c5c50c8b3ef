func.func @double_negation(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = sinter.neg %x : tensor<4xf32>
  %1 = sinter.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
