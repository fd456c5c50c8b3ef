func.func @from_siblings(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>, %p: tensor<64x128xf32>, %q: tensor<128x64xf32>) -> (tensor<32x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>) {
  %h = sinter.matmul %x, %w : tensor<32x64xf32>, tensor<64x64xf32>
  %f:3 = sinter.fusion %h : (tensor<32x64xf32>) -> (tensor<32x64xf32>, tensor<32x1xf32>, tensor<32x64xf32>) {
  ^bb0(%in: tensor<32x64xf32>):
    %sum = sinter.reduce_sum %in, dims = [1] keepdim : tensor<32x64xf32>
    %sb = sinter.broadcast_in_dim %sum, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x64xf32>
    %c = sinter.sub %in, %sb : tensor<32x64xf32>
    %sq = sinter.mul %c, %c : tensor<32x64xf32>
    %var = sinter.reduce_sum %sq, dims = [1] keepdim : tensor<32x64xf32>
    %r = sinter.rsqrt %var : tensor<32x1xf32>
    %rb = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x64xf32>
    %o = sinter.mul %c, %rb : tensor<32x64xf32>
    sinter.yield %c, %r, %o : tensor<32x64xf32>, tensor<32x1xf32>, tensor<32x64xf32>
  }
  %y = sinter.matmul %f#2, %w : tensor<32x64xf32>, tensor<64x64xf32>
  %big = sinter.matmul %p, %q : tensor<64x128xf32>, tensor<128x64xf32>
  %s = sinter.fusion %big : (tensor<64x64xf32>) -> tensor<32x64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %sl = sinter.slice %in, start = [0, 0], limit = [32, 64], step = [1, 1] : tensor<64x64xf32>
    sinter.yield %sl : tensor<32x64xf32>
  }
  %dw = sinter.matmul %f#2, %s transpose_lhs : tensor<32x64xf32>, tensor<32x64xf32>
  %dh = sinter.fusion %f#0, %f#1, %y : (tensor<32x64xf32>, tensor<32x1xf32>, tensor<32x64xf32>) -> tensor<32x64xf32> {
  ^bb0(%a: tensor<32x64xf32>, %b: tensor<32x1xf32>, %d: tensor<32x64xf32>):
    %bb = sinter.broadcast_in_dim %b, dims = [0, 1] : tensor<32x1xf32> -> tensor<32x64xf32>
    %m = sinter.mul %a, %bb : tensor<32x64xf32>
    %n = sinter.mul %m, %d : tensor<32x64xf32>
    sinter.yield %n : tensor<32x64xf32>
  }
  return %y, %dw, %dh : tensor<32x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>
}
