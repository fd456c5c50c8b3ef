func.func @conv_rank(%x: tensor<3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}
