func.func @random_seed_shape(%seed: tensor<2xi64>) {
  %0 = "sinter.random"(%seed) <{distribution = #sinter<random_distribution uniform>, stream = 0 : i64}> : (tensor<2xi64>) -> tensor<8xf32>
  return
}
