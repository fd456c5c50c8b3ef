func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x4xbf16>) {
  %0 = sinter.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xbf16>
  return
}
