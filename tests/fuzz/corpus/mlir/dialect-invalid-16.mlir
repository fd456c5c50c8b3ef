func.func @reshape_element_type(%a: tensor<4xf32>) {
  %0 = sinter.reshape %a : tensor<4xf32> -> tensor<2x2xi32>
  return
}
