func.func @constant_type() {
  %0 = "sinter.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<2xf32>
  return
}
