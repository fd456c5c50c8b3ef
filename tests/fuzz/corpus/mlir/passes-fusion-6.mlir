func.func @no_cycles_through_groups(%x: tensor<3x4xf32>, %y: tensor<4x6xf32>) -> (tensor<3xf32>, tensor<2x3x4xf32>) {
  %u2 = sinter.reduce_sum %y, dims = [1] : tensor<4x6xf32>
  %v1 = sinter.broadcast_in_dim %u2, dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
  %u1 = sinter.exp %x : tensor<3x4xf32>
  %w1 = sinter.add %u1, %v1 : tensor<3x4xf32>
  %r1 = sinter.reduce_sum %w1, dims = [1] : tensor<3x4xf32>
  %v2 = sinter.broadcast_in_dim %u1, dims = [1, 2] : tensor<3x4xf32> -> tensor<2x3x4xf32>
  %b2 = sinter.broadcast_in_dim %u2, dims = [2] : tensor<4xf32> -> tensor<2x3x4xf32>
  %r2 = sinter.add %b2, %v2 : tensor<2x3x4xf32>
  return %r1, %r2 : tensor<3xf32>, tensor<2x3x4xf32>
}
