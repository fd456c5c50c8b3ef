func.func @gather_axis(%t: tensor<100x16xf32>, %i: tensor<8xi32>) {
  %0 = sinter.gather %t[%i], axis = 2 : tensor<100x16xf32>, tensor<8xi32>
  return
}
