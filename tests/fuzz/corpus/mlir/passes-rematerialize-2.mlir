func.func @two_starts(%x0: tensor<32x64xf32>, %x1: tensor<32x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x256xf32>, %w2: tensor<256x64xf32>, %p: tensor<128x128xf32>, %q: tensor<128x128xf32>) -> (tensor<32x64xf32>, tensor<64x256xf32>, tensor<32x64xf32>) {
  %a = sinter.matmul %x0, %w0 : tensor<32x64xf32>, tensor<64x64xf32>
  %b = sinter.matmul %x1, %w0 : tensor<32x64xf32>, tensor<64x64xf32>
  %f:3 = sinter.fusion %a, %b : (tensor<32x64xf32>, tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<32x1xf32>, tensor<32x64xf32>) {
  ^bb0(%in: tensor<32x64xf32>, %in2: tensor<32x64xf32>):
    %x = sinter.add %in, %in2 : tensor<32x64xf32>
    %sum = sinter.reduce_sum %x, dims = [1] keepdim : tensor<32x64xf32>
    %sb = sinter.broadcast_in_dim %sum, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x64xf32>
    %c = sinter.sub %x, %sb : tensor<32x64xf32>
    %sq = sinter.mul %c, %c : tensor<32x64xf32>
    %var = sinter.reduce_sum %sq, dims = [1] keepdim : tensor<32x64xf32>
    %r = sinter.rsqrt %var : tensor<32x1xf32>
    %rb = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x64xf32>
    %o = sinter.mul %c, %rb : tensor<32x64xf32>
    sinter.yield %c, %r, %o : tensor<32x64xf32>, tensor<32x1xf32>, tensor<32x64xf32>
  }
  %h = sinter.matmul %f#2, %w1 : tensor<32x64xf32>, tensor<64x256xf32>
  %g = sinter.fusion %h : (tensor<32x256xf32>) -> tensor<32x256xf32> {
  ^bb0(%in: tensor<32x256xf32>):
    %t = sinter.tanh %in : tensor<32x256xf32>
    sinter.yield %t : tensor<32x256xf32>
  }
  %y = sinter.matmul %g, %w2 : tensor<32x256xf32>, tensor<256x64xf32>
  %big = sinter.matmul %p, %q : tensor<128x128xf32>, tensor<128x128xf32>
  %s = sinter.fusion %big : (tensor<128x128xf32>) -> tensor<32x256xf32> {
  ^bb0(%in: tensor<128x128xf32>):
    %sl = sinter.reshape %in : tensor<128x128xf32> -> tensor<64x256xf32>
    %s2 = sinter.slice %sl, start = [0, 0], limit = [32, 256], step = [1, 1] : tensor<64x256xf32>
    sinter.yield %s2 : tensor<32x256xf32>
  }
  %dh = sinter.fusion %s, %h : (tensor<32x256xf32>, tensor<32x256xf32>) -> tensor<32x256xf32> {
  ^bb0(%u: tensor<32x256xf32>, %v: tensor<32x256xf32>):
    %m = sinter.mul %u, %v : tensor<32x256xf32>
    sinter.yield %m : tensor<32x256xf32>
  }
  %dw1 = sinter.matmul %f#2, %dh transpose_lhs : tensor<32x64xf32>, tensor<32x256xf32>
  %do = sinter.matmul %dh, %w1 transpose_rhs : tensor<32x256xf32>, tensor<64x256xf32>
  %dx = sinter.fusion %f#0, %f#1, %do : (tensor<32x64xf32>, tensor<32x1xf32>, tensor<32x64xf32>) -> tensor<32x64xf32> {
  ^bb0(%u: tensor<32x64xf32>, %v: tensor<32x1xf32>, %d: tensor<32x64xf32>):
    %vb = sinter.broadcast_in_dim %v, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x64xf32>
    %m = sinter.mul %u, %vb : tensor<32x64xf32>
    %n = sinter.mul %m, %d : tensor<32x64xf32>
    sinter.yield %n : tensor<32x64xf32>
  }
  return %y, %dw1, %dx : tensor<32x64xf32>, tensor<64x256xf32>, tensor<32x64xf32>
}
