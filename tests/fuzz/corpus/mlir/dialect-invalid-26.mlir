func.func @concat_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xf16>) {
  %0 = sinter.concat (%a, %b), dim = 0 : tensor<4x8xf32>, tensor<4x8xf16>
  return
}
