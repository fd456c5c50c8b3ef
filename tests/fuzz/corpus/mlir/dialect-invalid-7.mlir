func.func @compare_result_shape(%a: tensor<4xf32>) {
  %0 = "sinter.compare"(%a, %a) <{direction = #sinter<comparison_direction lt>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xi1>
  return
}
