func.func @matmul_kept(%x: tensor<64x16xf32>, %w: tensor<16x256xf32>, %p: tensor<128x128xf32>, %q: tensor<128x128xf32>) -> (tensor<64x256xf32>, tensor<128x128xf32>, tensor<64x256xf32>, tensor<16x256xf32>) {
  %n = sinter.fusion %x : (tensor<64x16xf32>) -> tensor<64x16xf32> {
  ^bb0(%in: tensor<64x16xf32>):
    %t = sinter.neg %in : tensor<64x16xf32>
    sinter.yield %t : tensor<64x16xf32>
  }
  %h = sinter.matmul %n, %w : tensor<64x16xf32>, tensor<16x256xf32>
  %a = sinter.fusion %h : (tensor<64x256xf32>) -> tensor<64x256xf32> {
  ^bb0(%in: tensor<64x256xf32>):
    %t = sinter.tanh %in : tensor<64x256xf32>
    sinter.yield %t : tensor<64x256xf32>
  }
  %big = sinter.matmul %p, %q : tensor<128x128xf32>, tensor<128x128xf32>
  %s = sinter.fusion %big : (tensor<128x128xf32>) -> tensor<128x128xf32> {
  ^bb0(%in: tensor<128x128xf32>):
    %e = sinter.exp %in : tensor<128x128xf32>
    sinter.yield %e : tensor<128x128xf32>
  }
  %dh = sinter.fusion %h : (tensor<64x256xf32>) -> tensor<64x256xf32> {
  ^bb0(%in: tensor<64x256xf32>):
    %e = sinter.exp %in : tensor<64x256xf32>
    sinter.yield %e : tensor<64x256xf32>
  }
  %dw = sinter.matmul %n, %dh transpose_lhs : tensor<64x16xf32>, tensor<64x256xf32>
  %w2 = sinter.fusion %w, %dw : (tensor<16x256xf32>, tensor<16x256xf32>) -> tensor<16x256xf32> {
  ^bb0(%a0: tensor<16x256xf32>, %b0: tensor<16x256xf32>):
    %d = sinter.sub %a0, %b0 : tensor<16x256xf32>
    sinter.yield %d : tensor<16x256xf32>
  }
  return %a, %s, %dh, %w2 : tensor<64x256xf32>, tensor<128x128xf32>, tensor<64x256xf32>, tensor<16x256xf32>
}
