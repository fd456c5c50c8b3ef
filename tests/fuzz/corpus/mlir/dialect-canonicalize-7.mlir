func.func @splat_constants_through_layout() -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4xi32>) {
  %c = sinter.constant dense<2.0> : tensor<8xf32>
  %0 = sinter.broadcast_in_dim %c, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %1 = sinter.transpose %0, perm = [1, 0] : tensor<4x8xf32>
  %m = sinter.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %2 = sinter.reshape %m : tensor<2x2xi32> -> tensor<4xi32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4xi32>
}
