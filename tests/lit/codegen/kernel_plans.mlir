// RUN: sinter-opt %s --sinter-pipeline | sinter-translate --sinter-to-kernel-plans | FileCheck %s
// RUN: sinter-opt %s --sinter-pipeline | sinter-translate --sinter-to-cuda-kernel-plans | FileCheck %s --check-prefix=CUDA

// The plans of representative fusions (Note [Kernel plans] in
// sinter/Codegen/KernelPlan.h): what the CPU renderer writes and what
// planning asks, as text.

// Softmax: a row kernel. The max and the sum are row reductions into per-row
// buffers, the exponentials a row on the thread's stack (read twice), the
// quotient a local of the output loop; the result may be written over the
// input (read only at the index it writes, and by reductions before).
// CHECK-LABEL: // kernel 0 at {{.*}}: rows: 4 rows of 8
// CHECK-NEXT: input %in0: f32[4x8]
// CHECK-NEXT: %0 = reduce_max %in0 : f32[4] reduced over [1] by row, scratch 0, per row
// CHECK-NEXT: %1 = broadcast_in_dim %0 : f32[4x8] reads at 0 + strides [1, 0], function, per row
// CHECK-NEXT: %2 = sub %in0, %1 : f32[4x8], function, per row
// CHECK-NEXT: %3 = exp %2 : f32[4x8], row on the stack, per row
// CHECK-NEXT: %4 = reduce_sum %3 : f32[4] reduced over [1] by row, scratch 1, per row
// CHECK-NEXT: %5 = broadcast_in_dim %4 : f32[4x8] reads at 0 + strides [1, 0], function, per row
// CHECK-NEXT: %6 = div %3, %5 : f32[4x8], local, per row
// CHECK-NEXT: result 0 = %6
// CHECK-NEXT: scratch 0: 16 bytes
// CHECK-NEXT: scratch 1: 16 bytes
// CHECK-NEXT: result 0 may be written over %in0
// CHECK-NEXT: chosen: 8 lanes, 16 rows, column blocks of 64, 262144 bytes of rows on the stack, stored values in scratch
//
// The CUDA target plans the same analysis with its own choices (Note [Plan
// choices]): nothing on a stack or in scratch, every value recomputed where
// read (its renderer keeps a row's values in registers), no scratch
// buffers (a row kernel has no split reduction).
// CUDA-LABEL: // kernel 0 at {{.*}}: rows: 4 rows of 8
// CUDA-NEXT: input %in0: f32[4x8]
// CUDA-NEXT: %0 = reduce_max %in0 : f32[4] reduced over [1] by row, function, per row
// CUDA:      %3 = exp %2 : f32[4x8], function, per row
// CUDA-NEXT: %4 = reduce_sum %3 : f32[4] reduced over [1] by row, function, per row
// CUDA:      result 0 = %6
// CUDA-NEXT: result 0 may be written over %in0
// CUDA-NEXT: chosen: 0 lanes, 0 rows, column blocks of 0, 0 bytes of rows on the stack, values recomputed where read
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sinter.reduce_max %x, dims = [1] : tensor<4x8xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = sinter.sub %x, %mb : tensor<4x8xf32>
  %e = sinter.exp %d : tensor<4x8xf32>
  %s = sinter.reduce_sum %e, dims = [1] : tensor<4x8xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = sinter.div %e, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// Layer norm, keeping its centered input and 1/sigma for the backward pass:
// both reductions by rows, the centered input on the stack (read by the
// variance and the output), 1/sigma per row; the weight is broadcast along
// the rows (stride 0 down the column).
// CHECK-LABEL: // kernel 1 at {{.*}}: rows: 4 rows of 8
// CHECK-NEXT: input %in0: f32[4x8]
// CHECK-NEXT: input %in1: f32[8]
// CHECK-NEXT: %0 = constant 1e-05 : f32[4], function
// CHECK-NEXT: %1 = constant 0.125 : f32[4], function
// CHECK-NEXT: %2 = reduce_sum %in0 : f32[4] reduced over [1] by row, scratch 0, per row
// CHECK-NEXT: %3 = mul %2, %1 : f32[4], function, per row
// CHECK-NEXT: %4 = broadcast_in_dim %3 : f32[4x8] reads at 0 + strides [1, 0], function, per row
// CHECK-NEXT: %5 = sub %in0, %4 : f32[4x8], row on the stack, per row
// CHECK-NEXT: %6 = mul %5, %5 : f32[4x8], function, per row
// CHECK-NEXT: %7 = reduce_sum %6 : f32[4] reduced over [1] by row, scratch 1, per row
// CHECK-NEXT: %8 = mul %7, %1 : f32[4], function, per row
// CHECK-NEXT: %9 = add %8, %0 : f32[4], function, per row
// CHECK-NEXT: %10 = rsqrt %9 : f32[4], scratch 2, per row
// CHECK-NEXT: %11 = broadcast_in_dim %10 : f32[4x8] reads at 0 + strides [1, 0], function, per row
// CHECK-NEXT: %12 = mul %5, %11 : f32[4x8], function, per row
// CHECK-NEXT: %13 = broadcast_in_dim %in1 : f32[4x8] reads at 0 + strides [0, 1], function
// CHECK-NEXT: %14 = mul %12, %13 : f32[4x8], function, per row
// CHECK-NEXT: result 0 = %5
// CHECK-NEXT: result 1 = %10
// CHECK-NEXT: result 2 = %14
// CHECK-NEXT: scratch 0: 16 bytes
// CHECK-NEXT: scratch 1: 16 bytes
// CHECK-NEXT: scratch 2: 16 bytes
// CHECK-NEXT: result 0 may be written over %in0
// CHECK-NEXT: result 2 may be written over %in0
func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %inv = sinter.constant dense<0.125> : tensor<4xf32>
  %eps = sinter.constant dense<1.0e-5> : tensor<4xf32>
  %s = sinter.reduce_sum %x, dims = [1] : tensor<4x8xf32>
  %mean = sinter.mul %s, %inv : tensor<4xf32>
  %mb = sinter.broadcast_in_dim %mean, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %xc = sinter.sub %x, %mb : tensor<4x8xf32>
  %sq = sinter.mul %xc, %xc : tensor<4x8xf32>
  %v = sinter.reduce_sum %sq, dims = [1] : tensor<4x8xf32>
  %var = sinter.mul %v, %inv : tensor<4xf32>
  %ve = sinter.add %var, %eps : tensor<4xf32>
  %r = sinter.rsqrt %ve : tensor<4xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %xh = sinter.mul %xc, %rb : tensor<4x8xf32>
  %wb = sinter.broadcast_in_dim %w, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %y = sinter.mul %xh, %wb : tensor<4x8xf32>
  return %y, %xc, %r : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
}

// Its backward pass: two row reductions of the weighted gradient, then one
// loop of locals; the input gradient may be written over the centered input
// or the output gradient.
// CHECK-LABEL: // kernel 2 at {{.*}}: rows: 4 rows of 8
// CHECK-NEXT: input %in0: f32[4]
// CHECK-NEXT: input %in1: f32[4x8]
// CHECK-NEXT: input %in2: f32[8]
// CHECK-NEXT: input %in3: f32[4x8]
// CHECK-NEXT: %0 = constant 0.125 : f32[4], function
// CHECK-NEXT: %1 = broadcast_in_dim %in0 : f32[4x8] reads at 0 + strides [1, 0], function
// CHECK-NEXT: %2 = mul %in1, %1 : f32[4x8], row on the stack, per row
// CHECK-NEXT: %3 = broadcast_in_dim %in2 : f32[4x8] reads at 0 + strides [0, 1], function
// CHECK-NEXT: %4 = mul %in3, %3 : f32[4x8], row on the stack, per row
// CHECK-NEXT: %5 = reduce_sum %4 : f32[4] reduced over [1] by row, scratch 0, per row
// CHECK-NEXT: %6 = mul %5, %0 : f32[4], function, per row
// CHECK-NEXT: %7 = mul %4, %2 : f32[4x8], function, per row
// CHECK-NEXT: %8 = reduce_sum %7 : f32[4] reduced over [1] by row, scratch 1, per row
// CHECK-NEXT: %9 = mul %8, %0 : f32[4], function, per row
// CHECK-NEXT: %10 = broadcast_in_dim %6 : f32[4x8] reads at 0 + strides [1, 0], function, per row
// CHECK-NEXT: %11 = broadcast_in_dim %9 : f32[4x8] reads at 0 + strides [1, 0], function, per row
// CHECK-NEXT: %12 = sub %4, %10 : f32[4x8], local, per row
// CHECK-NEXT: %13 = mul %2, %11 : f32[4x8], local, per row
// CHECK-NEXT: %14 = sub %12, %13 : f32[4x8], local, per row
// CHECK-NEXT: %15 = mul %14, %1 : f32[4x8], local, per row
// CHECK-NEXT: result 0 = %15
// CHECK-NEXT: scratch 0: 16 bytes
// CHECK-NEXT: scratch 1: 16 bytes
// CHECK-NEXT: result 0 may be written over %in1
// CHECK-NEXT: result 0 may be written over %in3
func.func @layer_norm_backward(%xc: tensor<4x8xf32>, %r: tensor<4xf32>, %dy: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %inv = sinter.constant dense<0.125> : tensor<4xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %xh = sinter.mul %xc, %rb : tensor<4x8xf32>
  %wb = sinter.broadcast_in_dim %w, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %g = sinter.mul %dy, %wb : tensor<4x8xf32>
  %s1 = sinter.reduce_sum %g, dims = [1] : tensor<4x8xf32>
  %m1 = sinter.mul %s1, %inv : tensor<4xf32>
  %gx = sinter.mul %g, %xh : tensor<4x8xf32>
  %s2 = sinter.reduce_sum %gx, dims = [1] : tensor<4x8xf32>
  %m2 = sinter.mul %s2, %inv : tensor<4xf32>
  %m1b = sinter.broadcast_in_dim %m1, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %m2b = sinter.broadcast_in_dim %m2, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %a = sinter.sub %g, %m1b : tensor<4x8xf32>
  %b = sinter.mul %xh, %m2b : tensor<4x8xf32>
  %c = sinter.sub %a, %b : tensor<4x8xf32>
  %dx = sinter.mul %c, %rb : tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// An AdamW update: one elementwise loop of locals writing the parameter and
// both moments; each result may be written over the inputs it reads at its
// index.
// CHECK-LABEL: // kernel 3 at {{.*}}: elementwise over 256 elements in 1 loop
// CHECK-NEXT: input %in0: f32[256]
// CHECK-NEXT: input %in1: f32[256]
// CHECK-NEXT: input %in2: f32[256]
// CHECK-NEXT: input %in3: f32[256]
// CHECK-NEXT: %0 = constant 0.99999 : f32[256], local
// CHECK-NEXT: %1 = constant 1e-08 : f32[256], local
// CHECK-NEXT: %2 = constant 0.001 : f32[256], local
// CHECK-NEXT: %3 = constant 0.999 : f32[256], local
// CHECK-NEXT: %4 = constant 0.1 : f32[256], local
// CHECK-NEXT: %5 = constant 0.9 : f32[256], local
// CHECK-NEXT: %6 = mul %in0, %5 : f32[256], local, loop 0
// CHECK-NEXT: %7 = mul %in1, %4 : f32[256], local, loop 0
// CHECK-NEXT: %8 = add %6, %7 : f32[256], local, loop 0
// CHECK-NEXT: %9 = mul %in2, %3 : f32[256], local, loop 0
// CHECK-NEXT: %10 = mul %in1, %in1 : f32[256], local, loop 0
// CHECK-NEXT: %11 = mul %10, %2 : f32[256], local, loop 0
// CHECK-NEXT: %12 = add %9, %11 : f32[256], local, loop 0
// CHECK-NEXT: %13 = sqrt %12 : f32[256], local, loop 0
// CHECK-NEXT: %14 = add %13, %1 : f32[256], local, loop 0
// CHECK-NEXT: %15 = div %8, %14 : f32[256], local, loop 0
// CHECK-NEXT: %16 = mul %15, %2 : f32[256], local, loop 0
// CHECK-NEXT: %17 = mul %in3, %0 : f32[256], local, loop 0
// CHECK-NEXT: %18 = sub %17, %16 : f32[256], local, loop 0
// CHECK-NEXT: result 0 = %8 in loop 0
// CHECK-NEXT: result 1 = %12 in loop 0
// CHECK-NEXT: result 2 = %18 in loop 0
// CHECK-NEXT: result 0 may be written over %in0
// CHECK-NEXT: result 2 may be written over %in0
// CHECK-NEXT: result 0 may be written over %in1
// CHECK-NEXT: result 1 may be written over %in1
// CHECK-NEXT: result 2 may be written over %in1
// CHECK-NEXT: result 1 may be written over %in2
// CHECK-NEXT: result 2 may be written over %in2
// CHECK-NEXT: result 2 may be written over %in3
func.func @adamw(%p: tensor<256xf32>, %g: tensor<256xf32>, %m: tensor<256xf32>, %v: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  %b1 = sinter.constant dense<0.9> : tensor<256xf32>
  %c1 = sinter.constant dense<0.1> : tensor<256xf32>
  %b2 = sinter.constant dense<0.999> : tensor<256xf32>
  %c2 = sinter.constant dense<0.001> : tensor<256xf32>
  %lr = sinter.constant dense<0.001> : tensor<256xf32>
  %eps = sinter.constant dense<1.0e-8> : tensor<256xf32>
  %decay = sinter.constant dense<0.99999> : tensor<256xf32>
  %m1 = sinter.mul %m, %b1 : tensor<256xf32>
  %m2 = sinter.mul %g, %c1 : tensor<256xf32>
  %mn = sinter.add %m1, %m2 : tensor<256xf32>
  %v1 = sinter.mul %v, %b2 : tensor<256xf32>
  %gg = sinter.mul %g, %g : tensor<256xf32>
  %v2 = sinter.mul %gg, %c2 : tensor<256xf32>
  %vn = sinter.add %v1, %v2 : tensor<256xf32>
  %sq = sinter.sqrt %vn : tensor<256xf32>
  %de = sinter.add %sq, %eps : tensor<256xf32>
  %st = sinter.div %mn, %de : tensor<256xf32>
  %sl = sinter.mul %st, %lr : tensor<256xf32>
  %pd = sinter.mul %p, %decay : tensor<256xf32>
  %pn = sinter.sub %pd, %sl : tensor<256xf32>
  return %pn, %mn, %vn : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}

// A bias gradient: a sum over the leading dimension by blocks of columns,
// into a scratch buffer.
// CHECK-LABEL: // kernel 4 at {{.*}}: elementwise over 32 elements in 1 loop
// CHECK-NEXT: input %in0: f32[64x32]
// CHECK-NEXT: %0 = reduce_sum %in0 : f32[32] reduced over [0] by column blocks, scratch 0, loop 0
// CHECK-NEXT: result 0 = %0 in loop 0
// CHECK-NEXT: scratch 0: 128 bytes
// On the CUDA target the sum is the renderer's to walk (a thread per
// column, or split: Note [Split column reductions]), computed where read.
// CUDA-LABEL: // kernel 4 at {{.*}}: elementwise over 32 elements in 1 loop
// CUDA-NEXT: input %in0: f32[64x32]
// CUDA-NEXT: %0 = reduce_sum %in0 : f32[32] reduced over [0] by general, function, loop 0
// CUDA-NEXT: result 0 = %0 in loop 0
// CUDA-NEXT: chosen: 0 lanes
func.func @bias_gradient(%g: tensor<64x32xf32>) -> tensor<32xf32> {
  %s = sinter.reduce_sum %g, dims = [0] : tensor<64x32xf32>
  return %s : tensor<32xf32>
}

// A broadcast-transpose-slice chain: layout ops are index maps (the
// transpose swaps the strides, the slice starts at row 1 of the transposed
// value, element 8, the broadcast has stride 0 along the columns); only the
// sum is computed, as a local.
// CHECK-LABEL: // kernel 5 at {{.*}}: elementwise over 32 elements in 1 loop
// CHECK-NEXT: input %in0: f32[8x6]
// CHECK-NEXT: input %in1: f32[4]
// CHECK-NEXT: %0 = transpose %in0 : f32[6x8] reads at 0 + strides [1, 6], function, loop 0
// CHECK-NEXT: %1 = slice %0 : f32[4x8] reads at 8 + strides [8, 1], function, loop 0
// CHECK-NEXT: %2 = broadcast_in_dim %in1 : f32[4x8] reads at 0 + strides [1, 0], function
// CHECK-NEXT: %3 = add %1, %2 : f32[4x8], local, loop 0
// CHECK-NEXT: result 0 = %3 in loop 0
func.func @chain(%x: tensor<8x6xf32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  %t = sinter.transpose %x, perm = [1, 0] : tensor<8x6xf32>
  %s = sinter.slice %t, start = [1, 0], limit = [5, 8], step = [1, 1] : tensor<6x8xf32>
  %bb = sinter.broadcast_in_dim %b, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = sinter.add %s, %bb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// Dropout, and the column number of every element: the plan carries what the
// kernel is written from (the random op's distribution and stream, the
// comparison's direction, the constants' values, the iota's dim). The seed
// is read at index 0, so no result may be written over it; the iota shares
// nothing with the dropout and is a kernel of its own.
// CHECK-LABEL: // kernel 6 at {{.*}}: elementwise over 32 elements in 1 loop
// CHECK-NEXT: input %in0: i64[]
// CHECK-NEXT: input %in1: f32[4x8]
// CHECK-NEXT: %0 = constant 0 : f32[4x8], local
// CHECK-NEXT: %1 = constant 1.1111112 : f32[4x8], local
// CHECK-NEXT: %2 = constant 0.1 : f32[4x8], local
// CHECK-NEXT: %3 = random uniform stream 2 %in0 : f32[4x8], function, loop 0
// CHECK-NEXT: %4 = compare ge %3, %2 : i1[4x8], local, loop 0
// CHECK-NEXT: %5 = mul %in1, %1 : f32[4x8], local, loop 0
// CHECK-NEXT: %6 = select %4, %5, %0 : f32[4x8], local, loop 0
// CHECK-NEXT: result 0 = %6 in loop 0
// CHECK-NEXT: result 0 may be written over %in1
// CHECK-NOT: may be written over %in0
// CHECK-LABEL: // kernel 7 at {{.*}}: elementwise over 32 elements in 1 loop
// CHECK-NEXT: %0 = iota dim 1 : i64[4x8], function, loop 0
// CHECK-NEXT: %1 = convert %0 : i32[4x8], local, loop 0
// CHECK-NEXT: result 0 = %1 in loop 0
func.func @dropout(%x: tensor<4x8xf32>, %seed: tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xi32>) {
  %u = sinter.random uniform, %seed, stream = 2 : tensor<4x8xf32>
  %p = sinter.constant dense<0.1> : tensor<4x8xf32>
  %keep = sinter.compare ge, %u, %p : tensor<4x8xf32>
  %zero = sinter.constant dense<0.0> : tensor<4x8xf32>
  %scale = sinter.constant dense<1.11111116> : tensor<4x8xf32>
  %xs = sinter.mul %x, %scale : tensor<4x8xf32>
  %y = sinter.select %keep, %xs, %zero : tensor<4x8xi1>, tensor<4x8xf32>
  %i = sinter.iota dim = 1 : tensor<4x8xi64>
  %n = sinter.convert %i : tensor<4x8xi64> -> tensor<4x8xi32>
  return %y, %n : tensor<4x8xf32>, tensor<4x8xi32>
}
