func.func @reduce_dim_twice(%a: tensor<4x8xf32>) {
  %0 = sinter.reduce_max %a, dims = [1, 1] : tensor<4x8xf32>
  return
}
