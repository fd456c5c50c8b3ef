func.func @scatter_updates_shape(%t: tensor<100x16xf32>, %i: tensor<8xi32>, %u: tensor<8x15xf32>) {
  %0 = sinter.scatter_add %t[%i], %u, axis = 0 : tensor<100x16xf32>, tensor<8xi32>, tensor<8x15xf32>
  return
}
