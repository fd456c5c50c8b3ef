func.func @unary_result_type(%a: tensor<4xf32>) {
  %0 = "sinter.exp"(%a) : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}
