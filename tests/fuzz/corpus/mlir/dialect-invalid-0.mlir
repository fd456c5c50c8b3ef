func.func @binary_operand_types(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  %0 = "sinter.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}
