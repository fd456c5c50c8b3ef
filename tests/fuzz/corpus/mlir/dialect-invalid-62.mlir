func.func @pool_padding(%x: tensor<8x16x32x32xf32>) {
  %0 = sinter.pool2d max, %x, kernel = [3, 3], stride = [1, 1], padding = [2, 2] : tensor<8x16x32x32xf32>
  return
}
