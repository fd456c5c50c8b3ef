func.func @binary_result_type(%a: tensor<4xf32>) {
  %0 = sinter.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return
}
