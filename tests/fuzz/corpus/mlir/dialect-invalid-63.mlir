func.func @pool_kernel_too_large(%x: tensor<8x16x2x2xf32>) {
  %0 = sinter.pool2d max, %x, kernel = [3, 3], stride = [1, 1], padding = [0, 0] : tensor<8x16x2x2xf32>
  return
}
