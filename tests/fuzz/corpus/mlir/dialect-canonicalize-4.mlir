func.func @constant_folding() -> (tensor<2xf32>, tensor<2xi64>, tensor<2xf32>) {
  %a = sinter.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %b = sinter.constant dense<[3.0, 7.0]> : tensor<2xf32>
  %0 = sinter.add %a, %b : tensor<2xf32>
  %1 = sinter.mul %0, %a : tensor<2xf32>
  %2 = sinter.sub %1, %a : tensor<2xf32>
  %i = sinter.constant dense<[1, 2]> : tensor<2xi64>
  %j = sinter.constant dense<[3, -5]> : tensor<2xi64>
  %3 = sinter.sub %i, %j : tensor<2xi64>
  %4 = sinter.mul %3, %i : tensor<2xi64>
  %5 = sinter.neg %4 : tensor<2xi64>
  %6 = sinter.neg %5 : tensor<2xi64>
  %one = sinter.constant dense<1.0> : tensor<2xf32>
  %four = sinter.constant dense<4.0> : tensor<2xf32>
  %7 = sinter.div %one, %four : tensor<2xf32>
  return %2, %6, %7 : tensor<2xf32>, tensor<2xi64>, tensor<2xf32>
}
