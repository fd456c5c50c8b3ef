func.func @gather_float_indices(%t: tensor<100x16xf32>, %i: tensor<8xf32>) {
  %0 = sinter.gather %t[%i], axis = 0 : tensor<100x16xf32>, tensor<8xf32>
  return
}
