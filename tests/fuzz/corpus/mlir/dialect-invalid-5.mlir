func.func @unsupported_element_type(%a: tensor<4xf64>) {
  %0 = sinter.neg %a : tensor<4xf64>
  return
}
