func.func @costly(%x: tensor<32x256xf32>, %m: tensor<256x256xf32>, %w: tensor<64x8xf32>, %p: tensor<64x128xf32>, %q: tensor<128x64xf32>) -> (tensor<32x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<64x64xf32>) {
  %h = sinter.matmul %x, %m : tensor<32x256xf32>, tensor<256x256xf32>
  %g = sinter.fusion %h : (tensor<32x256xf32>) -> tensor<32x64xf32> {
  ^bb0(%in: tensor<32x256xf32>):
    %r = sinter.reshape %in : tensor<32x256xf32> -> tensor<32x64x4xf32>
    %t = sinter.reduce_sum %r, dims = [2] : tensor<32x64x4xf32>
    sinter.yield %t : tensor<32x64xf32>
  }
  %y = sinter.matmul %g, %w : tensor<32x64xf32>, tensor<64x8xf32>
  %big = sinter.matmul %p, %q : tensor<64x128xf32>, tensor<128x64xf32>
  %s = sinter.fusion %big : (tensor<64x64xf32>) -> tensor<32x64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %sl = sinter.slice %in, start = [0, 0], limit = [32, 64], step = [1, 1] : tensor<64x64xf32>
    sinter.yield %sl : tensor<32x64xf32>
  }
  %dh = sinter.fusion %h : (tensor<32x256xf32>) -> tensor<32x8xf32> {
  ^bb0(%in: tensor<32x256xf32>):
    %sl = sinter.slice %in, start = [0, 0], limit = [32, 8], step = [1, 1] : tensor<32x256xf32>
    %e = sinter.exp %sl : tensor<32x8xf32>
    sinter.yield %e : tensor<32x8xf32>
  }
  %z = sinter.fusion %s : (tensor<32x64xf32>) -> tensor<32x8xf32> {
  ^bb0(%in: tensor<32x64xf32>):
    %sl = sinter.slice %in, start = [0, 0], limit = [32, 8], step = [1, 1] : tensor<32x64xf32>
    %e = sinter.exp %sl : tensor<32x8xf32>
    sinter.yield %e : tensor<32x8xf32>
  }
  %dw = sinter.matmul %g, %s transpose_lhs : tensor<32x64xf32>, tensor<32x64xf32>
  return %y, %dh, %z, %dw : tensor<32x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<64x64xf32>
}
