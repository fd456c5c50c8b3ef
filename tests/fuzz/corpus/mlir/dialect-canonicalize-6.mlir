func.func @layout_chains(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %0 = sinter.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = sinter.reshape %0 : tensor<6x4xf32> -> tensor<24xf32>
  %2 = sinter.transpose %x, perm = [1, 2, 0] : tensor<2x3x4xf32>
  %3 = sinter.transpose %2, perm = [1, 2, 0] : tensor<3x4x2xf32>
  %4 = sinter.transpose %x, perm = [2, 0, 1] : tensor<2x3x4xf32>
  %5 = sinter.transpose %4, perm = [1, 2, 0] : tensor<4x2x3xf32>
  return %1, %3, %5 : tensor<24xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>
}
