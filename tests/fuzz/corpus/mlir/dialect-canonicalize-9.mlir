func.func @empty_reductions(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = sinter.reduce_sum %x, dims = [] : tensor<4x8xf32>
  %1 = sinter.reduce_max %x, dims = [] keepdim : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}
