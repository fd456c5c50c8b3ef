func.func @random_stream(%seed: tensor<i64>) {
  %0 = sinter.random uniform, %seed, stream = -1 : tensor<8xf32>
  return
}
