func.func @in_place(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = sinter.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32>
  %b = sinter.fusion %a : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %e = sinter.exp %in : tensor<64x64xf32>
    sinter.yield %e : tensor<64x64xf32>
  }
  %c = sinter.matmul %b, %w : tensor<64x64xf32>, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

func.func @views_and_fills(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %one = sinter.constant dense<1.0> : tensor<8x4xf32>
  %a = sinter.fusion %x, %one : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%p: tensor<8x4xf32>, %q: tensor<8x4xf32>):
    %e = sinter.add %p, %q : tensor<8x4xf32>
    sinter.yield %e : tensor<8x4xf32>
  }
  %s = sinter.slice %a, start = [2, 0], limit = [4, 4], step = [1, 1] : tensor<8x4xf32>
  %m = sinter.matmul %s, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %g = sinter.fusion %a : (tensor<8x4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<8x4xf32>):
    %r = sinter.reduce_sum %p, dims = [0] : tensor<8x4xf32>
    sinter.yield %r : tensor<4xf32>
  }
  return %m, %g : tensor<2x4xf32>, tensor<4xf32>
}

func.func @products(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %y: tensor<2x8x4xf32>,
                    %v: tensor<4x16xf32>) -> (tensor<2x4x16xf32>, tensor<2x4x4xf32>, tensor<2x8x16xf32>) {
  %0 = sinter.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  %1 = sinter.matmul %x, %y : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  %2 = sinter.matmul %x, %v transpose_lhs : tensor<2x4x8xf32>, tensor<4x16xf32>
  return %0, %1, %2 : tensor<2x4x16xf32>, tensor<2x4x4xf32>, tensor<2x8x16xf32>
}
