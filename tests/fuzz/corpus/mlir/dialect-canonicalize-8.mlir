func.func @select_folds(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = sinter.constant dense<true> : tensor<4xi1>
  %f = sinter.constant dense<false> : tensor<4xi1>
  %0 = sinter.select %t, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = sinter.select %f, %a, %b : tensor<4xi1>, tensor<4xf32>
  %2 = sinter.select %p, %a, %a : tensor<4xi1>, tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
