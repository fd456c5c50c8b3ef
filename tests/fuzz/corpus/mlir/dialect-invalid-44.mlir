func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  %0 = sinter.matmul %a, %b : tensor<8xf32>, tensor<8x4xf32>
  return
}
