func.func @concat_dim(%a: tensor<4x8xf32>) {
  %0 = sinter.concat (%a, %a), dim = 2 : tensor<4x8xf32>, tensor<4x8xf32>
  return
}
