func.func @concat_shapes(%a: tensor<4x8xf32>, %b: tensor<4x7xf32>) {
  %0 = sinter.concat (%a, %b), dim = 0 : tensor<4x8xf32>, tensor<4x7xf32>
  return
}
