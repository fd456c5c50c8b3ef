func.func @scatter_element_type(%t: tensor<100x16xf32>, %i: tensor<8xi32>, %u: tensor<8x16xf16>) {
  %0 = sinter.scatter_add %t[%i], %u, axis = 0 : tensor<100x16xf32>, tensor<8xi32>, tensor<8x16xf16>
  return
}
