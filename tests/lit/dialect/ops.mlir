// Round trip of every sinter op: parse, print, parse again; and through the
// generic form.
// RUN: sinter-opt %s | sinter-opt | FileCheck %s
// RUN: sinter-opt %s --mlir-print-op-generic | sinter-opt | FileCheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi32>, %m: tensor<4xi1>) -> tensor<4x8xf32> {
  // CHECK: sinter.neg %{{.*}} : tensor<4x8xf32>
  %0 = sinter.neg %x : tensor<4x8xf32>
  // CHECK: sinter.abs %{{.*}} : tensor<4xi32>
  %1 = sinter.abs %i : tensor<4xi32>
  // CHECK: sinter.exp
  %2 = sinter.exp %0 : tensor<4x8xf32>
  // CHECK: sinter.log
  %3 = sinter.log %2 : tensor<4x8xf32>
  // CHECK: sinter.tanh
  %4 = sinter.tanh %3 : tensor<4x8xf32>
  // CHECK: sinter.sqrt
  %5 = sinter.sqrt %4 : tensor<4x8xf32>
  // CHECK: sinter.rsqrt
  %6 = sinter.rsqrt %5 : tensor<4x8xf32>
  // CHECK: sinter.sigmoid
  %7 = sinter.sigmoid %6 : tensor<4x8xf32>
  // CHECK: sinter.erf
  %8 = sinter.erf %7 : tensor<4x8xf32>
  // CHECK: sinter.sin
  %9 = sinter.sin %8 : tensor<4x8xf32>
  // CHECK: sinter.cos
  %10 = sinter.cos %9 : tensor<4x8xf32>
  // CHECK: sinter.not %{{.*}} : tensor<4xi1>
  %11 = sinter.not %m : tensor<4xi1>
  return %10 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4xbf16>, %b: tensor<4xbf16>, %i: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>) {
  // CHECK: sinter.add %{{.*}}, %{{.*}} : tensor<4xbf16>
  %0 = sinter.add %a, %b : tensor<4xbf16>
  // CHECK: sinter.sub
  %1 = sinter.sub %0, %b : tensor<4xbf16>
  // CHECK: sinter.mul
  %2 = sinter.mul %1, %b : tensor<4xbf16>
  // CHECK: sinter.div
  %3 = sinter.div %2, %b : tensor<4xbf16>
  // CHECK: sinter.max
  %4 = sinter.max %3, %b : tensor<4xbf16>
  // CHECK: sinter.min
  %5 = sinter.min %4, %b : tensor<4xbf16>
  // CHECK: sinter.pow
  %6 = sinter.pow %5, %b : tensor<4xbf16>
  // CHECK: sinter.add %{{.*}}, %{{.*}} : tensor<4xi64>
  %7 = sinter.add %i, %i : tensor<4xi64>
  // CHECK: sinter.and %{{.*}}, %{{.*}} : tensor<4xi1>
  %8 = sinter.and %p, %q : tensor<4xi1>
  // CHECK: sinter.or
  %9 = sinter.or %p, %q : tensor<4xi1>
  // CHECK: sinter.xor %{{.*}}, %{{.*}} : tensor<4xi64>
  %10 = sinter.xor %i, %i : tensor<4xi64>
  return
}

// CHECK-LABEL: func.func @compare_select_convert
func.func @compare_select_convert(%x: tensor<4x8xf16>, %y: tensor<4x8xf16>) -> tensor<4x8xi32> {
  // CHECK: %[[M:.*]] = sinter.compare lt, %{{.*}}, %{{.*}} : tensor<4x8xf16>
  %m = sinter.compare lt, %x, %y : tensor<4x8xf16>
  // CHECK: sinter.select %[[M]], %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf16>
  %s = sinter.select %m, %x, %y : tensor<4x8xi1>, tensor<4x8xf16>
  // CHECK: sinter.convert %{{.*}} : tensor<4x8xf16> -> tensor<4x8xi32>
  %c = sinter.convert %s : tensor<4x8xf16> -> tensor<4x8xi32>
  return %c : tensor<4x8xi32>
}

// CHECK-LABEL: func.func @layout
func.func @layout(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %y: tensor<2x8xf32>) {
  // CHECK: sinter.broadcast_in_dim %{{.*}}, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %0 = sinter.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: sinter.reshape %{{.*}} : tensor<4x8xf32> -> tensor<2x16xf32>
  %1 = sinter.reshape %0 : tensor<4x8xf32> -> tensor<2x16xf32>
  // CHECK: sinter.transpose %{{.*}}, perm = [1, 0] : tensor<4x8xf32>
  %2 = sinter.transpose %x, perm = [1, 0] : tensor<4x8xf32>
  // CHECK: sinter.slice %{{.*}}, start = [0, 2], limit = [4, 8], step = [1, 2] : tensor<4x8xf32>
  %3 = sinter.slice %x, start = [0, 2], limit = [4, 8], step = [1, 2] : tensor<4x8xf32>
  // CHECK: sinter.concat(%{{.*}}, %{{.*}}), dim = 0 : tensor<4x8xf32>, tensor<2x8xf32>
  %4 = sinter.concat (%x, %y), dim = 0 : tensor<4x8xf32>, tensor<2x8xf32>
  return
}

// CHECK-LABEL: func.func @gather_scatter
func.func @gather_scatter(%table: tensor<100x16xf32>, %ids: tensor<8x4xi32>) -> tensor<100x16xf32> {
  // CHECK: %[[E:.*]] = sinter.gather %{{.*}}[%{{.*}}], axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>
  %e = sinter.gather %table[%ids], axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>
  // CHECK: sinter.scatter_add %{{.*}}[%{{.*}}], %[[E]], axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>, tensor<8x4x16xf32>
  %g = sinter.scatter_add %table[%ids], %e, axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>, tensor<8x4x16xf32>
  return %g : tensor<100x16xf32>
}

// CHECK-LABEL: func.func @sources
func.func @sources(%seed: tensor<i64>) {
  // CHECK: sinter.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = sinter.constant dense<1.0> : tensor<4xf32>
  // CHECK: sinter.constant dense<[1, 2]> : tensor<2xi64>
  %1 = sinter.constant dense<[1, 2]> : tensor<2xi64>
  // CHECK: sinter.iota dim = 1 : tensor<8x128xi64>
  %2 = sinter.iota dim = 1 : tensor<8x128xi64>
  // CHECK: sinter.random uniform, %{{.*}}, stream = 3 : tensor<8x16xf32>
  %3 = sinter.random uniform, %seed, stream = 3 : tensor<8x16xf32>
  // CHECK: sinter.random normal, %{{.*}}, stream = 4 : tensor<8x16xbf16>
  %4 = sinter.random normal, %seed, stream = 4 : tensor<8x16xbf16>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x8x16xf32>) {
  // CHECK: sinter.reduce_sum %{{.*}}, dims = [2] : tensor<4x8x16xf32>
  %0 = sinter.reduce_sum %x, dims = [2] : tensor<4x8x16xf32>
  // CHECK: sinter.reduce_max %{{.*}}, dims = [0, 2] keepdim : tensor<4x8x16xf32>
  %1 = sinter.reduce_max %x, dims = [0, 2] keepdim : tensor<4x8x16xf32>
  // CHECK: sinter.argmax %{{.*}}, dim = 1 : tensor<4x8x16xf32>
  %2 = sinter.argmax %x, dim = 1 : tensor<4x8x16xf32>
  // CHECK: sinter.argmax %{{.*}}, dim = 2 keepdim : tensor<4x8x16xf32>
  %3 = sinter.argmax %x, dim = 2 keepdim : tensor<4x8x16xf32>
  return
}

// CHECK-LABEL: func.func @matmuls
func.func @matmuls(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %y: tensor<2x8x4xf32>) {
  // CHECK: sinter.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  %0 = sinter.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  // CHECK: sinter.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  %1 = sinter.matmul %x, %y : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  // CHECK: sinter.matmul %{{.*}}, %{{.*}} transpose_lhs transpose_rhs : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  %2 = sinter.matmul %x, %y transpose_lhs transpose_rhs : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  return
}

// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x: tensor<8x4x32x32xf32>, %w: tensor<16x2x3x3xf32>, %dy: tensor<8x16x16x16xf32>) {
  // CHECK: sinter.conv2d %{{.*}}, %{{.*}}, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>
  %y = sinter.conv2d %x, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>
  // CHECK: sinter.conv2d_backward_input %{{.*}}, %{{.*}}, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x16x16x16xf32>, tensor<16x2x3x3xf32> -> tensor<8x4x32x32xf32>
  %dx = sinter.conv2d_backward_input %dy, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x16x16x16xf32>, tensor<16x2x3x3xf32> -> tensor<8x4x32x32xf32>
  // CHECK: sinter.conv2d_backward_filter %{{.*}}, %{{.*}}, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<8x16x16x16xf32> -> tensor<16x2x3x3xf32>
  %dw = sinter.conv2d_backward_filter %x, %dy, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<8x16x16x16xf32> -> tensor<16x2x3x3xf32>
  return
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<8x16x32x32xf32>, %dy: tensor<8x16x16x16xf32>) {
  // CHECK: sinter.pool2d max, %{{.*}}, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  %p = sinter.pool2d max, %x, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  // CHECK: sinter.pool2d avg, %{{.*}}, kernel = [3, 3], stride = [2, 2], padding = [1, 1] : tensor<8x16x32x32xf32>
  %a = sinter.pool2d avg, %x, kernel = [3, 3], stride = [2, 2], padding = [1, 1] : tensor<8x16x32x32xf32>
  // CHECK: sinter.pool2d_backward max, %{{.*}}, %{{.*}}, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x16x16xf32>
  %dx = sinter.pool2d_backward max, %x, %dy, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x16x16xf32>
  return
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%a: tensor<256x256xf32>, %b: tensor<256xf32>) -> (tensor<256x256xf32>, tensor<256xf32>) {
  // CHECK: %{{.*}}:2 = sinter.all_reduce mean, %{{.*}}, %{{.*}} : tensor<256x256xf32>, tensor<256xf32>
  %r:2 = sinter.all_reduce mean, %a, %b : tensor<256x256xf32>, tensor<256xf32>
  // CHECK: sinter.all_reduce sum, %{{.*}} : tensor<256xf32>
  %s = sinter.all_reduce sum, %b : tensor<256xf32>
  return %r#0, %r#1 : tensor<256x256xf32>, tensor<256xf32>
}

// CHECK-LABEL: func.func @fusion
func.func @fusion(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // CHECK: %{{.*}}:2 = sinter.fusion %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8xf32>):
  // CHECK: sinter.yield %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4xf32>
  %r:2 = sinter.fusion %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>):
    %bb = sinter.broadcast_in_dim %ba, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    %s = sinter.add %xa, %bb : tensor<4x8xf32>
    %m = sinter.reduce_max %s, dims = [1] : tensor<4x8xf32>
    sinter.yield %s, %m : tensor<4x8xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4xf32>
}
