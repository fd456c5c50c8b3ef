func.func @arithmetic_identities(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = sinter.constant dense<0.0> : tensor<4xf32>
  %one = sinter.constant dense<1.0> : tensor<4xf32>
  %izero = sinter.constant dense<0> : tensor<4xi32>
  %ione = sinter.constant dense<1> : tensor<4xi32>
  %0 = sinter.add %x, %zero : tensor<4xf32>
  %1 = sinter.add %zero, %x : tensor<4xf32>
  %2 = sinter.sub %x, %zero : tensor<4xf32>
  %3 = sinter.mul %one, %x : tensor<4xf32>
  %4 = sinter.div %x, %one : tensor<4xf32>
  %5 = sinter.add %i, %izero : tensor<4xi32>
  %6 = sinter.mul %i, %ione : tensor<4xi32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}
