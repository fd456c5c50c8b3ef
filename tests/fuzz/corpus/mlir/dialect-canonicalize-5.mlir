func.func @no_fold_integer_division() -> tensor<2xi32> {
  %a = sinter.constant dense<[1, 2]> : tensor<2xi32>
  %b = sinter.constant dense<[0, 1]> : tensor<2xi32>
  %0 = sinter.div %a, %b : tensor<2xi32>
  return %0 : tensor<2xi32>
}
