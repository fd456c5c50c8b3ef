func.func @matmul_epilogue(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>) {
  %y = sinter.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32>
  %bb = sinter.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %z = sinter.add %y, %bb : tensor<4x8xf32>
  %zero = sinter.constant dense<0.0> : tensor<4x8xf32>
  %r = sinter.max %z, %zero : tensor<4x8xf32>
  %mask = sinter.compare gt, %z, %zero : tensor<4x8xf32>
  return %r, %mask, %r : tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>
}
