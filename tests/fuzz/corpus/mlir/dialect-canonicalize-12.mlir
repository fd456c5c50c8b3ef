func.func @transpose_of_matmul(%a: tensor<8x4xf32>, %b: tensor<8x5xf32>, %c: tensor<2x3x4xf32>, %d: tensor<4x5xf32>) -> (tensor<5x4xf32>, tensor<2x5x3xf32>) {
  %0 = sinter.matmul %a, %b transpose_lhs : tensor<8x4xf32>, tensor<8x5xf32>
  %1 = sinter.transpose %0, perm = [1, 0] : tensor<4x5xf32>
  %2 = sinter.matmul %c, %d : tensor<2x3x4xf32>, tensor<4x5xf32>
  %3 = sinter.transpose %2, perm = [0, 2, 1] : tensor<2x3x5xf32>
  return %1, %3 : tensor<5x4xf32>, tensor<2x5x3xf32>
}
