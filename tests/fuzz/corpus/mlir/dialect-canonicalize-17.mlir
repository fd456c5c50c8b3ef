func.func @sum_of_unslices(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<4x1xf32>) -> tensor<4x6xf32> {
  %z4 = sinter.constant dense<0.0> : tensor<4x4xf32>
  %z2 = sinter.constant dense<0.0> : tensor<4x2xf32>
  %z1 = sinter.constant dense<0.0> : tensor<4x1xf32>
  %z5 = sinter.constant dense<0.0> : tensor<4x5xf32>
  %ga = sinter.concat (%a, %z4), dim = 1 : tensor<4x2xf32>, tensor<4x4xf32>
  %gb = sinter.concat (%z2, %b, %z1), dim = 1 : tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x1xf32>
  %gc = sinter.concat (%z5, %c), dim = 1 : tensor<4x5xf32>, tensor<4x1xf32>
  %0 = sinter.add %ga, %gb : tensor<4x6xf32>
  %1 = sinter.add %0, %gc : tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}
