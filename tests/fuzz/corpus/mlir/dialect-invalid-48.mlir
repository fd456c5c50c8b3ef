func.func @matmul_contraction_transposed(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  %0 = sinter.matmul %a, %b transpose_lhs transpose_rhs : tensor<4x8xf32>, tensor<4x8xf32>
  return
}
