func.func @reduce_dim_range(%a: tensor<4x8xf32>) {
  %0 = sinter.reduce_sum %a, dims = [2] : tensor<4x8xf32>
  return
}
