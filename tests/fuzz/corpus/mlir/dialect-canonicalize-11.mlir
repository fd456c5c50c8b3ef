func.func @transpose_into_matmul(%a: tensor<8x4xf32>, %b: tensor<2x5x8xf32>, %c: tensor<5x2x8xf32>) -> (tensor<4x4xf32>, tensor<2x5x5xf32>, tensor<2x5x5xf32>) {
  %at = sinter.transpose %a, perm = [1, 0] : tensor<8x4xf32>
  %0 = sinter.matmul %at, %a : tensor<4x8xf32>, tensor<8x4xf32>
  %bt = sinter.transpose %b, perm = [0, 2, 1] : tensor<2x5x8xf32>
  %1 = sinter.matmul %b, %bt : tensor<2x5x8xf32>, tensor<2x8x5xf32>
  %ct = sinter.transpose %c, perm = [1, 0, 2] : tensor<5x2x8xf32>
  %2 = sinter.matmul %ct, %bt : tensor<2x5x8xf32>, tensor<2x8x5xf32>
  return %0, %1, %2 : tensor<4x4xf32>, tensor<2x5x5xf32>, tensor<2x5x5xf32>
}
