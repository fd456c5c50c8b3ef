func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sinter.reduce_max %x, dims = [1] : tensor<4x8xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = sinter.sub %x, %mb : tensor<4x8xf32>
  %e = sinter.exp %d : tensor<4x8xf32>
  %s = sinter.reduce_sum %e, dims = [1] : tensor<4x8xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = sinter.div %e, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
