func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sinter.reduce_max %x, dims = [1] keepdim : tensor<4x8xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  %s = sinter.sub %x, %mb : tensor<4x8xf32>
  %e = sinter.exp %s : tensor<4x8xf32>
  %t = sinter.reduce_sum %e, dims = [1] keepdim : tensor<4x8xf32>
  %tb = sinter.broadcast_in_dim %t, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  %y = sinter.div %e, %tb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
