func.func @conv_kernel_too_large(%x: tensor<8x3x4x4xf32>, %w: tensor<16x3x5x5xf32>) {
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [0, 0], dilation = [2, 2], groups = 1 : tensor<8x3x4x4xf32>, tensor<16x3x5x5xf32>
  return
}
