func.func @conv_backward_filter_shape(%x: tensor<8x3x32x32xf32>, %dy: tensor<8x16x32x32xf32>) {
  %0 = sinter.conv2d_backward_filter %x, %dy, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<8x3x32x32xf32>, tensor<8x16x32x32xf32> -> tensor<16x3x5x5xf32>
  return
}
