func.func @recipe_computes_what_reading_would_double(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %t = sinter.exp %x : tensor<4x8xf32>
  %y = sinter.mul %x, %t : tensor<4x8xf32>
  %n = sinter.matmul %t, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %d = sinter.mul %n, %y : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}
