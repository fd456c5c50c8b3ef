func.func @convert_shape(%a: tensor<4xf32>) {
  %0 = sinter.convert %a : tensor<4xf32> -> tensor<2x2xf16>
  return
}
