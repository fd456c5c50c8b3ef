func.func @no_fold_mul_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = sinter.constant dense<0.0> : tensor<4xf32>
  %0 = sinter.mul %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}
