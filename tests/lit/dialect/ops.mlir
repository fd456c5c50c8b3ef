// Round trip of every sinter op: parse, print, parse again; and through the
// generic form. Each check names the op's operands (captured where they are
// defined), its attributes and its types, so a printer or parser that drops
// or swaps any of them fails.
// RUN: sinter-opt %s | sinter-opt | FileCheck %s
// RUN: sinter-opt %s --mlir-print-op-generic | sinter-opt | FileCheck %s

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[I:[a-z0-9_]+]]: tensor<4xi32>, %[[M:[a-z0-9_]+]]: tensor<4xi1>) -> tensor<4x8xf32>
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi32>, %m: tensor<4xi1>) -> tensor<4x8xf32> {
  // CHECK: %[[V0:.*]] = sinter.neg %[[X]] : tensor<4x8xf32>
  %0 = sinter.neg %x : tensor<4x8xf32>
  // CHECK: sinter.abs %[[I]] : tensor<4xi32>
  %1 = sinter.abs %i : tensor<4xi32>
  // CHECK: %[[V2:.*]] = sinter.exp %[[V0]] : tensor<4x8xf32>
  %2 = sinter.exp %0 : tensor<4x8xf32>
  // CHECK: %[[V3:.*]] = sinter.log %[[V2]] : tensor<4x8xf32>
  %3 = sinter.log %2 : tensor<4x8xf32>
  // CHECK: %[[V4:.*]] = sinter.tanh %[[V3]] : tensor<4x8xf32>
  %4 = sinter.tanh %3 : tensor<4x8xf32>
  // CHECK: %[[V5:.*]] = sinter.sqrt %[[V4]] : tensor<4x8xf32>
  %5 = sinter.sqrt %4 : tensor<4x8xf32>
  // CHECK: %[[V6:.*]] = sinter.rsqrt %[[V5]] : tensor<4x8xf32>
  %6 = sinter.rsqrt %5 : tensor<4x8xf32>
  // CHECK: %[[V7:.*]] = sinter.sigmoid %[[V6]] : tensor<4x8xf32>
  %7 = sinter.sigmoid %6 : tensor<4x8xf32>
  // CHECK: %[[V8:.*]] = sinter.erf %[[V7]] : tensor<4x8xf32>
  %8 = sinter.erf %7 : tensor<4x8xf32>
  // CHECK: %[[V9:.*]] = sinter.sin %[[V8]] : tensor<4x8xf32>
  %9 = sinter.sin %8 : tensor<4x8xf32>
  // CHECK: %[[V10:.*]] = sinter.cos %[[V9]] : tensor<4x8xf32>
  %10 = sinter.cos %9 : tensor<4x8xf32>
  // CHECK: sinter.not %[[M]] : tensor<4xi1>
  %11 = sinter.not %m : tensor<4xi1>
  // CHECK: return %[[V10]] : tensor<4x8xf32>
  return %10 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:[a-z0-9_]+]]: tensor<4xbf16>, %[[B:[a-z0-9_]+]]: tensor<4xbf16>, %[[I:[a-z0-9_]+]]: tensor<4xi64>, %[[P:[a-z0-9_]+]]: tensor<4xi1>, %[[Q:[a-z0-9_]+]]: tensor<4xi1>)
func.func @binary(%a: tensor<4xbf16>, %b: tensor<4xbf16>, %i: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>) {
  // CHECK: %[[S0:.*]] = sinter.add %[[A]], %[[B]] : tensor<4xbf16>
  %0 = sinter.add %a, %b : tensor<4xbf16>
  // CHECK: %[[S1:.*]] = sinter.sub %[[S0]], %[[B]] : tensor<4xbf16>
  %1 = sinter.sub %0, %b : tensor<4xbf16>
  // CHECK: %[[S2:.*]] = sinter.mul %[[S1]], %[[B]] : tensor<4xbf16>
  %2 = sinter.mul %1, %b : tensor<4xbf16>
  // CHECK: %[[S3:.*]] = sinter.div %[[S2]], %[[B]] : tensor<4xbf16>
  %3 = sinter.div %2, %b : tensor<4xbf16>
  // CHECK: %[[S4:.*]] = sinter.max %[[S3]], %[[B]] : tensor<4xbf16>
  %4 = sinter.max %3, %b : tensor<4xbf16>
  // CHECK: %[[S5:.*]] = sinter.min %[[S4]], %[[B]] : tensor<4xbf16>
  %5 = sinter.min %4, %b : tensor<4xbf16>
  // CHECK: %[[S6:.*]] = sinter.pow %[[S5]], %[[B]] : tensor<4xbf16>
  %6 = sinter.pow %5, %b : tensor<4xbf16>
  // CHECK: sinter.add %[[I]], %[[I]] : tensor<4xi64>
  %7 = sinter.add %i, %i : tensor<4xi64>
  // CHECK: sinter.and %[[P]], %[[Q]] : tensor<4xi1>
  %8 = sinter.and %p, %q : tensor<4xi1>
  // CHECK: sinter.or %[[P]], %[[Q]] : tensor<4xi1>
  %9 = sinter.or %p, %q : tensor<4xi1>
  // CHECK: sinter.xor %[[I]], %[[I]] : tensor<4xi64>
  %10 = sinter.xor %i, %i : tensor<4xi64>
  return
}

// CHECK-LABEL: func.func @compare_select_convert
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x8xf16>, %[[Y:[a-z0-9_]+]]: tensor<4x8xf16>) -> tensor<4x8xi32>
func.func @compare_select_convert(%x: tensor<4x8xf16>, %y: tensor<4x8xf16>) -> tensor<4x8xi32> {
  // CHECK: %[[M:.*]] = sinter.compare lt, %[[X]], %[[Y]] : tensor<4x8xf16>
  %m = sinter.compare lt, %x, %y : tensor<4x8xf16>
  // CHECK: %[[S:.*]] = sinter.select %[[M]], %[[X]], %[[Y]] : tensor<4x8xi1>, tensor<4x8xf16>
  %s = sinter.select %m, %x, %y : tensor<4x8xi1>, tensor<4x8xf16>
  // CHECK: %[[C:.*]] = sinter.convert %[[S]] : tensor<4x8xf16> -> tensor<4x8xi32>
  // CHECK: return %[[C]]
  %c = sinter.convert %s : tensor<4x8xf16> -> tensor<4x8xi32>
  return %c : tensor<4x8xi32>
}

// CHECK-LABEL: func.func @layout
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<8xf32>, %[[Y:[a-z0-9_]+]]: tensor<2x8xf32>)
func.func @layout(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %y: tensor<2x8xf32>) {
  // CHECK: %[[BB:.*]] = sinter.broadcast_in_dim %[[B]], dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %0 = sinter.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: sinter.reshape %[[BB]] : tensor<4x8xf32> -> tensor<2x16xf32>
  %1 = sinter.reshape %0 : tensor<4x8xf32> -> tensor<2x16xf32>
  // CHECK: sinter.transpose %[[X]], perm = [1, 0] : tensor<4x8xf32>
  %2 = sinter.transpose %x, perm = [1, 0] : tensor<4x8xf32>
  // CHECK: sinter.slice %[[X]], start = [0, 2], limit = [4, 8], step = [1, 2] : tensor<4x8xf32>
  %3 = sinter.slice %x, start = [0, 2], limit = [4, 8], step = [1, 2] : tensor<4x8xf32>
  // CHECK: sinter.concat(%[[X]], %[[Y]]), dim = 0 : tensor<4x8xf32>, tensor<2x8xf32>
  %4 = sinter.concat (%x, %y), dim = 0 : tensor<4x8xf32>, tensor<2x8xf32>
  return
}

// CHECK-LABEL: func.func @gather_scatter
// CHECK-SAME: (%[[T:[a-z0-9_]+]]: tensor<100x16xf32>, %[[IDS:[a-z0-9_]+]]: tensor<8x4xi32>)
func.func @gather_scatter(%table: tensor<100x16xf32>, %ids: tensor<8x4xi32>) -> tensor<100x16xf32> {
  // CHECK: %[[E:.*]] = sinter.gather %[[T]][%[[IDS]]], axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>
  %e = sinter.gather %table[%ids], axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>
  // CHECK: %[[G:.*]] = sinter.scatter_add %[[T]][%[[IDS]]], %[[E]], axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>, tensor<8x4x16xf32>
  %g = sinter.scatter_add %table[%ids], %e, axis = 0 : tensor<100x16xf32>, tensor<8x4xi32>, tensor<8x4x16xf32>
  // CHECK: return %[[G]]
  return %g : tensor<100x16xf32>
}

// CHECK-LABEL: func.func @sources
// CHECK-SAME: (%[[SEED:[a-z0-9_]+]]: tensor<i64>)
func.func @sources(%seed: tensor<i64>) {
  // CHECK: sinter.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = sinter.constant dense<1.0> : tensor<4xf32>
  // CHECK: sinter.constant dense<[1, 2]> : tensor<2xi64>
  %1 = sinter.constant dense<[1, 2]> : tensor<2xi64>
  // CHECK: sinter.iota dim = 1 : tensor<8x128xi64>
  %2 = sinter.iota dim = 1 : tensor<8x128xi64>
  // CHECK: sinter.random uniform, %[[SEED]], stream = 3 : tensor<8x16xf32>
  %3 = sinter.random uniform, %seed, stream = 3 : tensor<8x16xf32>
  // CHECK: sinter.random normal, %[[SEED]], stream = 4 : tensor<8x16xbf16>
  %4 = sinter.random normal, %seed, stream = 4 : tensor<8x16xbf16>
  return
}

// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x8x16xf32>)
func.func @reductions(%x: tensor<4x8x16xf32>) {
  // CHECK: %{{.*}} = sinter.reduce_sum %[[X]], dims = [2] : tensor<4x8x16xf32>{{$}}
  %0 = sinter.reduce_sum %x, dims = [2] : tensor<4x8x16xf32>
  // CHECK: sinter.reduce_max %[[X]], dims = [0, 2] keepdim : tensor<4x8x16xf32>
  %1 = sinter.reduce_max %x, dims = [0, 2] keepdim : tensor<4x8x16xf32>
  // CHECK: sinter.argmax %[[X]], dim = 1 : tensor<4x8x16xf32>{{$}}
  %2 = sinter.argmax %x, dim = 1 : tensor<4x8x16xf32>
  // CHECK: sinter.argmax %[[X]], dim = 2 keepdim : tensor<4x8x16xf32>
  %3 = sinter.argmax %x, dim = 2 keepdim : tensor<4x8x16xf32>
  return
}

// CHECK-LABEL: func.func @matmuls
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<2x4x8xf32>, %[[W:[a-z0-9_]+]]: tensor<16x8xf32>, %[[Y:[a-z0-9_]+]]: tensor<2x8x4xf32>)
func.func @matmuls(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %y: tensor<2x8x4xf32>) {
  // CHECK: sinter.matmul %[[X]], %[[W]] transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  %0 = sinter.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  // CHECK: sinter.matmul %[[X]], %[[Y]] : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  %1 = sinter.matmul %x, %y : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  // CHECK: sinter.matmul %[[X]], %[[Y]] transpose_lhs transpose_rhs : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  %2 = sinter.matmul %x, %y transpose_lhs transpose_rhs : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  return
}

// CHECK-LABEL: func.func @convolutions
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x4x32x32xf32>, %[[W:[a-z0-9_]+]]: tensor<16x2x3x3xf32>, %[[DY:[a-z0-9_]+]]: tensor<8x16x16x16xf32>)
func.func @convolutions(%x: tensor<8x4x32x32xf32>, %w: tensor<16x2x3x3xf32>, %dy: tensor<8x16x16x16xf32>) {
  // CHECK: sinter.conv2d %[[X]], %[[W]], stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>
  %y = sinter.conv2d %x, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<16x2x3x3xf32>
  // CHECK: sinter.conv2d_backward_input %[[DY]], %[[W]], stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x16x16x16xf32>, tensor<16x2x3x3xf32> -> tensor<8x4x32x32xf32>
  %dx = sinter.conv2d_backward_input %dy, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x16x16x16xf32>, tensor<16x2x3x3xf32> -> tensor<8x4x32x32xf32>
  // CHECK: sinter.conv2d_backward_filter %[[X]], %[[DY]], stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<8x16x16x16xf32> -> tensor<16x2x3x3xf32>
  %dw = sinter.conv2d_backward_filter %x, %dy, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 2 : tensor<8x4x32x32xf32>, tensor<8x16x16x16xf32> -> tensor<16x2x3x3xf32>
  return
}

// CHECK-LABEL: func.func @pooling
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16x32x32xf32>, %[[DY:[a-z0-9_]+]]: tensor<8x16x16x16xf32>)
func.func @pooling(%x: tensor<8x16x32x32xf32>, %dy: tensor<8x16x16x16xf32>) {
  // CHECK: sinter.pool2d max, %[[X]], kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  %p = sinter.pool2d max, %x, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  // CHECK: sinter.pool2d avg, %[[X]], kernel = [3, 3], stride = [2, 2], padding = [1, 1] : tensor<8x16x32x32xf32>
  %a = sinter.pool2d avg, %x, kernel = [3, 3], stride = [2, 2], padding = [1, 1] : tensor<8x16x32x32xf32>
  // CHECK: sinter.pool2d_backward max, %[[X]], %[[DY]], kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x16x16xf32>
  %dx = sinter.pool2d_backward max, %x, %dy, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x16x16xf32>
  return
}

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[A:[a-z0-9_]+]]: tensor<256x256xf32>, %[[B:[a-z0-9_]+]]: tensor<256xf32>)
func.func @collectives(%a: tensor<256x256xf32>, %b: tensor<256xf32>) -> (tensor<256x256xf32>, tensor<256xf32>) {
  // CHECK: %[[R:.*]]:2 = sinter.all_reduce mean, %[[A]], %[[B]] : tensor<256x256xf32>, tensor<256xf32>
  %r:2 = sinter.all_reduce mean, %a, %b : tensor<256x256xf32>, tensor<256xf32>
  // CHECK: sinter.all_reduce sum, %[[B]] : tensor<256xf32>
  %s = sinter.all_reduce sum, %b : tensor<256xf32>
  // CHECK: return %[[R]]#0, %[[R]]#1 : tensor<256x256xf32>, tensor<256xf32>
  return %r#0, %r#1 : tensor<256x256xf32>, tensor<256xf32>
}

// The region's arguments stand for the operands in order, and its body is
// printed op by op down to the yield of the results.
// CHECK-LABEL: func.func @fusion
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<8xf32>)
func.func @fusion(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // CHECK: %[[R:.*]]:2 = sinter.fusion %[[X]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // CHECK-NEXT: ^bb0(%[[XA:[a-z0-9_]+]]: tensor<4x8xf32>, %[[BA:[a-z0-9_]+]]: tensor<8xf32>):
  // CHECK-NEXT: %[[BB:.*]] = sinter.broadcast_in_dim %[[BA]], dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: %[[S:.*]] = sinter.add %[[XA]], %[[BB]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[M:.*]] = sinter.reduce_max %[[S]], dims = [1] : tensor<4x8xf32>
  // CHECK-NEXT: sinter.yield %[[S]], %[[M]] : tensor<4x8xf32>, tensor<4xf32>
  // CHECK-NEXT: }
  // CHECK-NEXT: return %[[R]]#0, %[[R]]#1 : tensor<4x8xf32>, tensor<4xf32>
  %r:2 = sinter.fusion %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>):
    %bb = sinter.broadcast_in_dim %ba, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    %s = sinter.add %xa, %bb : tensor<4x8xf32>
    %m = sinter.reduce_max %s, dims = [1] : tensor<4x8xf32>
    sinter.yield %s, %m : tensor<4x8xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4xf32>
}
