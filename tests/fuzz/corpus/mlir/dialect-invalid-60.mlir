func.func @pool_attr_size(%x: tensor<8x16x32x32xf32>) {
  %0 = sinter.pool2d max, %x, kernel = [2, 2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  return
}
