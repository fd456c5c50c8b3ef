func.func @cheapest_fit(%x: tensor<64x16xf32>, %w: tensor<16x256xf32>, %y: tensor<32x256xf32>, %p: tensor<128x128xf32>, %q: tensor<128x256xf32>) -> (tensor<64x256xf32>, tensor<32x256xf32>, tensor<128x256xf32>, tensor<64x256xf32>, tensor<16x256xf32>, tensor<32x256xf32>) {
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
  %c = sinter.fusion %y : (tensor<32x256xf32>) -> tensor<32x256xf32> {
  ^bb0(%in: tensor<32x256xf32>):
    %t = sinter.neg %in : tensor<32x256xf32>
    sinter.yield %t : tensor<32x256xf32>
  }
  %sm = sinter.fusion %c : (tensor<32x256xf32>) -> tensor<32x256xf32> {
  ^bb0(%in: tensor<32x256xf32>):
    %m = sinter.reduce_max %in, dims = [1] : tensor<32x256xf32>
    %mb = sinter.broadcast_in_dim %m, dims = [0] : tensor<32xf32> -> tensor<32x256xf32>
    %d = sinter.sub %in, %mb : tensor<32x256xf32>
    %e = sinter.exp %d : tensor<32x256xf32>
    sinter.yield %e : tensor<32x256xf32>
  }
  %b = sinter.fusion %sm : (tensor<32x256xf32>) -> tensor<32x256xf32> {
  ^bb0(%in: tensor<32x256xf32>):
    %t = sinter.tanh %in : tensor<32x256xf32>
    sinter.yield %t : tensor<32x256xf32>
  }
  %big = sinter.matmul %p, %q : tensor<128x128xf32>, tensor<128x256xf32>
  %s = sinter.fusion %big : (tensor<128x256xf32>) -> tensor<128x256xf32> {
  ^bb0(%in: tensor<128x256xf32>):
    %e = sinter.exp %in : tensor<128x256xf32>
    sinter.yield %e : tensor<128x256xf32>
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
  %dsm = sinter.fusion %sm, %c : (tensor<32x256xf32>, tensor<32x256xf32>) -> tensor<32x256xf32> {
  ^bb0(%a1: tensor<32x256xf32>, %b1: tensor<32x256xf32>):
    %m = sinter.mul %a1, %b1 : tensor<32x256xf32>
    sinter.yield %m : tensor<32x256xf32>
  }
  return %a, %b, %s, %dh, %w2, %dsm : tensor<64x256xf32>, tensor<32x256xf32>, tensor<128x256xf32>, tensor<64x256xf32>, tensor<16x256xf32>, tensor<32x256xf32>
}
