func.func @transpose_result(%a: tensor<4x8xf32>) {
  %0 = "sinter.transpose"(%a) <{perm = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}
