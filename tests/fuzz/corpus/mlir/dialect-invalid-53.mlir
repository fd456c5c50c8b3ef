func.func @conv_groups(%x: tensor<8x4x32x32xf32>, %w: tensor<6x2x3x3xf32>) {
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 4 : tensor<8x4x32x32xf32>, tensor<6x2x3x3xf32>
  return
}
