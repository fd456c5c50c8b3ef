func.func @select_value_types(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  %0 = "sinter.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}
