func.func @conv_kept(%x: tensor<2x4x16x16xf32>, %w: tensor<8x4x3x3xf32>, %p: tensor<128x128xf32>, %q: tensor<128x128xf32>) -> (tensor<2x8x16x16xf32>, tensor<128x128xf32>, tensor<2x8x16x16xf32>, tensor<2x4x16x16xf32>, tensor<8x4x3x3xf32>) {
  %n = sinter.fusion %x : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  ^bb0(%in: tensor<2x4x16x16xf32>):
    %t = sinter.neg %in : tensor<2x4x16x16xf32>
    sinter.yield %t : tensor<2x4x16x16xf32>
  }
  %h = sinter.conv2d %n, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<2x4x16x16xf32>, tensor<8x4x3x3xf32>
  %a = sinter.fusion %h : (tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32> {
  ^bb0(%in: tensor<2x8x16x16xf32>):
    %t = sinter.tanh %in : tensor<2x8x16x16xf32>
    sinter.yield %t : tensor<2x8x16x16xf32>
  }
  %big = sinter.matmul %p, %q : tensor<128x128xf32>, tensor<128x128xf32>
  %s = sinter.fusion %big : (tensor<128x128xf32>) -> tensor<128x128xf32> {
  ^bb0(%in: tensor<128x128xf32>):
    %e = sinter.exp %in : tensor<128x128xf32>
    sinter.yield %e : tensor<128x128xf32>
  }
  %dh = sinter.fusion %h : (tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32> {
  ^bb0(%in: tensor<2x8x16x16xf32>):
    %e = sinter.exp %in : tensor<2x8x16x16xf32>
    sinter.yield %e : tensor<2x8x16x16xf32>
  }
  %dn = sinter.fusion %n : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  ^bb0(%in: tensor<2x4x16x16xf32>):
    %e = sinter.exp %in : tensor<2x4x16x16xf32>
    sinter.yield %e : tensor<2x4x16x16xf32>
  }
  %w2 = sinter.fusion %w : (tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32> {
  ^bb0(%in: tensor<8x4x3x3xf32>):
    %e = sinter.neg %in : tensor<8x4x3x3xf32>
    sinter.yield %e : tensor<8x4x3x3xf32>
  }
  return %a, %s, %dh, %dn, %w2 : tensor<2x8x16x16xf32>, tensor<128x128xf32>, tensor<2x8x16x16xf32>, tensor<2x4x16x16xf32>, tensor<8x4x3x3xf32>
}
