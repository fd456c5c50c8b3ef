func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi32>, %m: tensor<4xi1>) -> tensor<4x8xf32> {
  %0 = sinter.neg %x : tensor<4x8xf32>
  %1 = sinter.abs %i : tensor<4xi32>
  %2 = sinter.exp %0 : tensor<4x8xf32>
  %3 = sinter.log %2 : tensor<4x8xf32>
  %4 = sinter.tanh %3 : tensor<4x8xf32>
  %5 = sinter.sqrt %4 : tensor<4x8xf32>
  %6 = sinter.rsqrt %5 : tensor<4x8xf32>
  %7 = sinter.sigmoid %6 : tensor<4x8xf32>
  %8 = sinter.erf %7 : tensor<4x8xf32>
  %9 = sinter.sin %8 : tensor<4x8xf32>
  %10 = sinter.cos %9 : tensor<4x8xf32>
  %11 = sinter.not %m : tensor<4xi1>
  return %10 : tensor<4x8xf32>
}

func.func @binary(%a: tensor<4xbf16>, %b: tensor<4xbf16>, %i: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>) {
  %0 = sinter.add %a, %b : tensor<4xbf16>
  %1 = sinter.sub %0, %b : tensor<4xbf16>
  %2 = sinter.mul %1, %b : tensor<4xbf16>
  %3 = sinter.div %2, %b : tensor<4xbf16>
  %4 = sinter.max %3, %b : tensor<4xbf16>
  %5 = sinter.min %4, %b : tensor<4xbf16>
  %6 = sinter.pow %5, %b : tensor<4xbf16>
  %7 = sinter.add %i, %i : tensor<4xi64>
  %8 = sinter.and %p, %q : tensor<4xi1>
  %9 = sinter.or %p, %q : tensor<4xi1>
  %10 = sinter.xor %i, %i : tensor<4xi64>
  return
}

func.func @compare_select_convert(%x: tensor<4x8xf16>, %y: tensor<4x8xf16>) -> tensor<4x8xi32> {
  %m = sinter.compare lt, %x, %y : tensor<4x8xf16>
  %s = sinter.select %m, %x, %y : tensor<4x8xi1>, tensor<4x8xf16>
  %c = sinter.convert %s : tensor<4x8xf16> -> tensor<4x8xi32>
  return %c : tensor<4x8xi32>
}

func.func @layout(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %y: tensor<2x8xf32>) {
  %0 = sinter.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %1 = sinter.reshape %0 : tensor<4x8xf32> -> tensor<2x16xf32>
  %2 = sinter.transpose %x, perm = [1, 0] : tensor<4x8xf32>
  %3 = sinter.slice %x, start = [0, 2], limit = [4, 8], step = [1, 2] : tensor<4x8xf32>
  %4 = sinter.concat (%x, %y), dim = 0 : tensor<4x8xf32>, tensor<2x8xf32>
  return
}

func.func @gather_scatter(%table: tensor<100x16xf32>, %ids: tensor<8x4xi32>) -> tensor<100x16xf32> {
  %e = sinter.gather %table[%ids], axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>
  %g = sinter.scatter_add %table[%ids], %e, axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>, tensor<8x4x16xf32>
  return %g : tensor<100x16xf32>
}

func.func @sources(%seed: tensor<i64>) {
  %0 = sinter.constant dense<1.0> : tensor<4xf32>
  %1 = sinter.constant dense<[1, 2]> : tensor<2xi64>
  %2 = sinter.iota dim = 1 : tensor<8x128xi64>
  %3 = sinter.random uniform, %seed, stream = 3 : tensor<8x16xf32>
  %4 = sinter.random normal, %seed, stream = 4 : tensor<8x16xbf16>
  return
}

func.func @reductions(%x: tensor<4x8x16xf32>) {
  %0 = sinter.reduce_sum %x, dims = [2] : tensor<4x8x16xf32>
  %1 = sinter.reduce_max %x, dims = [0, 2] keepdim : tensor<4x8x16xf32>
  %2 = sinter.argmax %x, dim = 1 : tensor<4x8x16xf32>
  %3 = sinter.argmax %x, dim = 2 keepdim : tensor<4x8x16xf32>
  return
}

func.func @matmuls(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %y: tensor<2x8x4xf32>) {
  %0 = sinter.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  %1 = sinter.matmul %x, %y : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  %2 = sinter.matmul %x, %y transpose_lhs transpose_rhs : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  return
}

func.func @convolutions(%x: tensor<8x4x32x32xf32>, %w: tensor<16x2x3x3xf32>, %dy: tensor<8x16x16x16xf32>) {
  %y = sinter.conv2d %x, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>
  %dx = sinter.conv2d_backward_input %dy, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x16x16x16xf32>, tensor<16x2x3x3xf32> -> tensor<8x4x32x32xf32>
  %dw = sinter.conv2d_backward_filter %x, %dy, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<8x16x16x16xf32> -> tensor<16x2x3x3xf32>
  return
}

func.func @pooling(%x: tensor<8x16x32x32xf32>, %dy: tensor<8x16x16x16xf32>) {
  %p = sinter.pool2d max, %x, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  %a = sinter.pool2d avg, %x, kernel = [3, 3], stride = [2, 2], padding = [1, 1] : tensor<8x16x32x32xf32>
  %dx = sinter.pool2d_backward max, %x, %dy, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x16x16xf32>
  return
}

func.func @collectives(%a: tensor<256x256xf32>, %b: tensor<256xf32>) -> (tensor<256x256xf32>, tensor<256xf32>) {
  %r:2 = sinter.all_reduce mean, %a, %b : tensor<256x256xf32>, tensor<256xf32>
  %s = sinter.all_reduce sum, %b : tensor<256xf32>
  return %r#0, %r#1 : tensor<256x256xf32>, tensor<256xf32>
}

func.func @fusion(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %r:2 = sinter.fusion %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>):
    %bb = sinter.broadcast_in_dim %ba, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    %s = sinter.add %xa, %bb : tensor<4x8xf32>
    %m = sinter.reduce_max %s, dims = [1] : tensor<4x8xf32>
    sinter.yield %s, %m : tensor<4x8xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4xf32>
}
