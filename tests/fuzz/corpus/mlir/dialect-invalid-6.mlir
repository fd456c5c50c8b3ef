func.func @compare_operand_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  %0 = "sinter.compare"(%a, %b) <{direction = #sinter<comparison_direction lt>}> : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  return
}
