func.func @random_integer_result(%seed: tensor<i64>) {
  %0 = sinter.random uniform, %seed, stream = 0 : tensor<8xi32>
  return
}
