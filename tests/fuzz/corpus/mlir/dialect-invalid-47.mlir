func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x4xf32>) {
  %0 = sinter.matmul %a, %b : tensor<4x8xf32>, tensor<7x4xf32>
  return
}
