func.func @recompute_not_store(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>, %g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sinter.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %bb = sinter.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %a = sinter.add %m, %bb : tensor<4x8xf32>
  %t = sinter.tanh %a : tensor<4x8xf32>
  %y = sinter.mul %a, %t : tensor<4x8xf32>
  %n = sinter.matmul %y, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %d = sinter.mul %n, %t : tensor<4x8xf32>
  %e = sinter.mul %d, %a : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
