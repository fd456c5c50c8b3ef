func.func @constant_element_type() {
  %0 = sinter.constant dense<1.0> : tensor<4xf64>
  return
}
