func.func @through_a_view(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>, %p: tensor<64x128xf32>, %q: tensor<128x64xf32>) -> (tensor<32x64xf32>, tensor<32x32xf32>, tensor<32x64xf32>) {
  %h = sinter.matmul %x, %w : tensor<32x64xf32>, tensor<64x64xf32>
  %g = sinter.fusion %h : (tensor<32x64xf32>) -> tensor<32x64xf32> {
  ^bb0(%in: tensor<32x64xf32>):
    %t = sinter.tanh %in : tensor<32x64xf32>
    sinter.yield %t : tensor<32x64xf32>
  }
  %v = sinter.reshape %g : tensor<32x64xf32> -> tensor<64x32xf32>
  %y = sinter.matmul %g, %w : tensor<32x64xf32>, tensor<64x64xf32>
  %big = sinter.matmul %p, %q : tensor<64x128xf32>, tensor<128x64xf32>
  %s = sinter.fusion %big : (tensor<64x64xf32>) -> tensor<64x32xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %sl = sinter.slice %in, start = [0, 0], limit = [64, 32], step = [1, 1] : tensor<64x64xf32>
    sinter.yield %sl : tensor<64x32xf32>
  }
  %dw = sinter.matmul %v, %s transpose_lhs : tensor<64x32xf32>, tensor<64x32xf32>
  %dh = sinter.fusion %h, %y : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32> {
  ^bb0(%a: tensor<32x64xf32>, %b: tensor<32x64xf32>):
    %m = sinter.mul %a, %b : tensor<32x64xf32>
    sinter.yield %m : tensor<32x64xf32>
  }
  return %y, %dw, %dh : tensor<32x64xf32>, tensor<32x32xf32>, tensor<32x64xf32>
}
