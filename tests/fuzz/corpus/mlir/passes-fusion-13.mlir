func.func @equality_reads_the_stored_value(%x: tensor<8x4xf32>, %v: tensor<1x4xf32>) -> tensor<8x4xf32> {
  %s = sinter.sigmoid %x : tensor<8x4xf32>
  %m = sinter.reduce_max %s, dims = [1] keepdim : tensor<8x4xf32>
  %w = sinter.matmul %m, %v : tensor<8x1xf32>, tensor<1x4xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0, 1] : tensor<8x1xf32> -> tensor<8x4xf32>
  %eq = sinter.compare eq, %s, %mb : tensor<8x4xf32>
  %f = sinter.convert %eq : tensor<8x4xi1> -> tensor<8x4xf32>
  %r = sinter.mul %f, %w : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
