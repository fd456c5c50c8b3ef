func.func @pool_backward_shape(%x: tensor<8x16x32x32xf32>, %dy: tensor<8x16x32x32xf32>) {
  %0 = sinter.pool2d_backward max, %x, %dy, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x32x32xf32>
  return
}
