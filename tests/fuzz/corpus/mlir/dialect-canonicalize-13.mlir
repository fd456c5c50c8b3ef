func.func @pow_by_constant(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %two = sinter.constant dense<2.0> : tensor<4xf32>
  %three = sinter.constant dense<3.0> : tensor<4xf32>
  %half = sinter.constant dense<0.5> : tensor<4xf32>
  %0 = sinter.pow %x, %two : tensor<4xf32>
  %1 = sinter.pow %x, %three : tensor<4xf32>
  %2 = sinter.pow %x, %half : tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
