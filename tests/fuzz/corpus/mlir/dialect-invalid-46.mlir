func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  %0 = sinter.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32>
  return
}
