func.func @reduce_result(%a: tensor<4x8xf32>) {
  %0 = "sinter.reduce_sum"(%a) <{dims = array<i64: 1>, keepdim}> : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}
