func.func @pool_attr_value(%x: tensor<8x16x32x32xf32>) {
  %0 = sinter.pool2d avg, %x, kernel = [2, 2], stride = [0, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  return
}
