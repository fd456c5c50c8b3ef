func.func @pool_rank(%x: tensor<16x32x32xf32>) {
  %0 = sinter.pool2d max, %x, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<16x32x32xf32>
  return
}
