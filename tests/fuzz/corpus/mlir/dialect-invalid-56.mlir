func.func @conv_backward_input_shape(%dy: tensor<8x16x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  %0 = sinter.conv2d_backward_input %dy, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<8x3x32x32xf32>
  return
}
