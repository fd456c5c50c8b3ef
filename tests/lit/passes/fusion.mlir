// RUN: sinter-opt %s --split-input-file --sinter-fusion | FileCheck %s
// RUN: sinter-opt %s --split-input-file --sinter-fusion="explain=1" --verify-diagnostics > /dev/null
// RUN: sinter-opt %s --split-input-file --sinter-fusion --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Softmax is one kernel: two row reductions and the elementwise ops between.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[F:.*]] = sinter.fusion %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK: sinter.reduce_max
// CHECK: sinter.exp
// CHECK: sinter.reduce_sum
// CHECK: sinter.div
// CHECK: sinter.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sinter.reduce_max %x, dims = [1] keepdim : tensor<4x8xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  %s = sinter.sub %x, %mb : tensor<4x8xf32>
  %e = sinter.exp %s : tensor<4x8xf32>
  %t = sinter.reduce_sum %e, dims = [1] keepdim : tensor<4x8xf32>
  %tb = sinter.broadcast_in_dim %t, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  %y = sinter.div %e, %tb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A matmul stays a library call; its bias-add-relu epilogue is one kernel
// with the splat constant cloned in, and the value used twice outside (the
// relu result) and the mask are both results of the fusion.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK: %[[M:.*]] = sinter.matmul
// CHECK-NEXT: %[[F:.*]]:2 = sinter.fusion %{{.*}}, %[[M]] : (tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
// CHECK: sinter.constant dense<0.000000e+00>
// CHECK: sinter.yield
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#0
func.func @matmul_epilogue(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>) {
  // expected-remark@+1 {{kept as its own op: matmul is a library call (cuBLASLt on GPU, oneDNN or OpenBLAS on CPU)}}
  %y = sinter.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32>
  %bb = sinter.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %z = sinter.add %y, %bb : tensor<4x8xf32>
  %zero = sinter.constant dense<0.0> : tensor<4x8xf32>
  %r = sinter.max %z, %zero : tensor<4x8xf32>
  %mask = sinter.compare gt, %z, %zero : tensor<4x8xf32>
  return %r, %mask, %r : tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xf32>
}

// -----

// A cheap producer read through a layout op is recomputed where it is read,
// whatever its size (here a bias, negated, broadcast over rows); a row
// reduction is not, and its result cannot feed a loop of another size.
// CHECK-LABEL: func.func @layout_consumers
// CHECK: %[[A:.*]] = sinter.fusion %{{.*}} : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: sinter.neg
// CHECK: sinter.broadcast_in_dim
// CHECK: sinter.exp
// CHECK: %[[R:.*]] = sinter.fusion %{{.*}} : (tensor<4x8xf32>) -> tensor<f32>
// CHECK: %[[B:.*]] = sinter.fusion %[[R]] : (tensor<f32>) -> tensor<3xf32>
func.func @layout_consumers(%b: tensor<8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<3xf32>) {
  %n = sinter.neg %b : tensor<8xf32>
  %bb = sinter.broadcast_in_dim %n, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %e = sinter.exp %bb : tensor<4x8xf32>
  %r = sinter.reduce_sum %x, dims = [0, 1] : tensor<4x8xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.reduce_sum': 'sinter.broadcast_in_dim': its 3 elements [3] are neither the fusion's domain (1 x 32) nor one per row}}
  %rb = sinter.broadcast_in_dim %r, dims = [] : tensor<f32> -> tensor<3xf32>
  %l = sinter.log %rb : tensor<3xf32>
  return %e, %l : tensor<4x8xf32>, tensor<3xf32>
}

// -----

// A reduction over leading dims is not a row reduction: a kernel of its
// own; reductions over different rows are different kernels.
// CHECK-LABEL: func.func @reductions
// CHECK: sinter.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: sinter.reduce_sum %{{.*}}, dims = [0]
// CHECK-NEXT: sinter.yield
// CHECK-COUNT-2: sinter.fusion
func.func @reductions(%x: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<f32>) {
  // expected-remark@+1 {{kept as its own kernel: reducing dims [0] of [4, 8] is not a row reduction (the reduced dims must be trailing)}}
  %c = sinter.reduce_sum %x, dims = [0] : tensor<4x8xf32>
  %r = sinter.reduce_sum %x, dims = [1] keepdim : tensor<4x8xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  // expected-remark@+1 {{recomputed in 1 later kernel(s) instead of stored (2 ops)}}
  %d = sinter.sub %x, %rb : tensor<4x8xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.sub': their row reductions have different domains (4 x 8 and 1 x 32)}}
  %all = sinter.reduce_sum %d, dims = [0, 1] : tensor<4x8xf32>
  return %c, %all : tensor<8xf32>, tensor<f32>
}

// -----

// Fusing a producer whose result returns through a library call would make
// two kernels wait on each other.
// CHECK-LABEL: func.func @no_cycles
// CHECK: %[[A:.*]] = sinter.fusion
// CHECK: %[[M:.*]] = sinter.matmul %[[A]]
// CHECK: sinter.fusion %{{.*}}, %[[M]]
func.func @no_cycles(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = sinter.exp %x : tensor<4x4xf32>
  // expected-remark@+1 {{kept as its own op: matmul is a library call}}
  %m = sinter.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.exp': the result would reach the fusion again through 'sinter.matmul', a cycle between kernels}}
  %s = sinter.add %a, %m : tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// A fusion's location fuses the locations of its ops (the user's lines).
// CHECK-LABEL: func.func @locations
// CHECK: sinter.fusion
// LOC: #[[E:loc[0-9]*]] = loc("train.cpp":10:3)
// LOC: #[[N:loc[0-9]*]] = loc("train.cpp":11:3)
// LOC: loc(fused[#[[E]], #[[N]]])
func.func @locations(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = sinter.exp %x : tensor<4xf32> loc("train.cpp":10:3)
  %b = sinter.neg %a : tensor<4xf32> loc("train.cpp":11:3)
  return %b : tensor<4xf32>
}

// -----

// Two fusions that would each need the other's result are not formed: other
// groups count as kernels on the paths between the two being merged.
// CHECK-LABEL: func.func @no_cycles_through_groups
// The broadcast of the first fusion's row sums is recomputed where it is
// read rather than stored (Note [Recompute, do not store]).
// CHECK: %[[A:.*]] = sinter.fusion %arg1
// CHECK: %[[B:.*]]:2 = sinter.fusion %[[A]], %arg0
// CHECK: sinter.fusion %[[B]]#0, %[[A]] :
func.func @no_cycles_through_groups(%x: tensor<3x4xf32>, %y: tensor<4x6xf32>) -> (tensor<3xf32>, tensor<2x3x4xf32>) {
  %u2 = sinter.reduce_sum %y, dims = [1] : tensor<4x6xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.reduce_sum'}}
  %v1 = sinter.broadcast_in_dim %u2, dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
  %u1 = sinter.exp %x : tensor<3x4xf32>
  %w1 = sinter.add %u1, %v1 : tensor<3x4xf32>
  %r1 = sinter.reduce_sum %w1, dims = [1] : tensor<3x4xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.exp'}}
  %v2 = sinter.broadcast_in_dim %u1, dims = [1, 2] : tensor<3x4xf32> -> tensor<2x3x4xf32>
  // expected-remark@+1 {{recomputed in 1 later kernel(s) instead of stored (1 ops)}}
  %b2 = sinter.broadcast_in_dim %u2, dims = [2] : tensor<4xf32> -> tensor<2x3x4xf32>
  // expected-remark@+1 {{the result would reach the fusion again through 'sinter.broadcast_in_dim', a cycle between kernels}}
  %r2 = sinter.add %b2, %v2 : tensor<2x3x4xf32>
  return %r1, %r2 : tensor<3xf32>, tensor<2x3x4xf32>
}

// -----

// GELU's intermediates, kept for the backward pass, are recomputed there from
// the matmul's result and the bias instead of being stored by the forward
// kernel: the forward fusion stores only what the next matmul reads.
// CHECK-LABEL: func.func @recompute_not_store
// CHECK: %[[M:.*]] = sinter.matmul
// CHECK: %[[F:.*]] = sinter.fusion %arg1, %[[M]] : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: sinter.matmul %[[F]]
// CHECK: sinter.fusion %arg1, %[[M]], %{{.*}} :
// CHECK-COUNT-1: sinter.add
// CHECK: sinter.tanh
// CHECK-NOT: sinter.add
// CHECK: sinter.yield
func.func @recompute_not_store(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>, %g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark@+1 {{kept as its own op: matmul is a library call}}
  %m = sinter.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %bb = sinter.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  // expected-remark@+1 {{recomputed in 1 later kernel(s) instead of stored (2 ops)}}
  %a = sinter.add %m, %bb : tensor<4x8xf32>
  // expected-remark@+1 {{recomputed in 1 later kernel(s) instead of stored (3 ops)}}
  %t = sinter.tanh %a : tensor<4x8xf32>
  %y = sinter.mul %a, %t : tensor<4x8xf32>
  // expected-remark@+1 {{kept as its own op: matmul is a library call}}
  %n = sinter.matmul %y, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // The "backward": reads the forward's tanh and sum.
  // expected-remark@+1 {{not fused with its operand 'sinter.tanh': the result would reach the fusion again through 'sinter.matmul'}}
  %d = sinter.mul %n, %t : tensor<4x8xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.add': the result would reach the fusion again through 'sinter.matmul'}}
  %e = sinter.mul %d, %a : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// A value whose recipe reads two tensors of its size is stored: recomputing
// it would move more memory than loading it.
// CHECK-LABEL: func.func @store_when_recomputing_reads_more
// CHECK: %[[F:.*]]:2 = sinter.fusion %arg0, %arg1
// CHECK: sinter.fusion %{{.*}}, %[[F]]#0 :
func.func @store_when_recomputing_reads_more(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-remark@+1 {{stored for a later kernel, not recomputed there: recomputing it would read 2 tensors of its size instead of it}}
  %s = sinter.add %x, %z : tensor<4x8xf32>
  %y = sinter.exp %s : tensor<4x8xf32>
  // expected-remark@+1 {{kept as its own op: matmul is a library call}}
  %n = sinter.matmul %y, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.add': the result would reach the fusion again through 'sinter.matmul'}}
  %d = sinter.mul %n, %s : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// A layer norm's normalized input (%h) is not stored for the backward pass:
// its readers compute it from the centered input and the row's 1/sigma,
// which the forward kernel stores anyway (the centered input for the
// backward, the broadcast of 1/sigma at its row size once canonicalized).
// Before, its recipe reached through %c to %a and %b (two tensors) and %h
// was stored too: one tensor of the layer's size more.
// CHECK-LABEL: func.func @recipe_reads_stored_values
// CHECK: %[[F:.*]]:4 = sinter.fusion %arg0, %arg1
// CHECK: %[[R:.*]] = sinter.rsqrt
// CHECK: sinter.yield %{{.*}}, %[[R]], %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: sinter.matmul %[[F]]#3
// CHECK: sinter.fusion %{{.*}}, %[[F]]#0, %[[F]]#2, %[[F]]#1 :
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<4x8xf32>, %[[C:.*]]: tensor<4x8xf32>, %{{.*}}: tensor<4x8xf32>, %[[S:.*]]: tensor<4x1xf32>):
// CHECK: %[[B:.*]] = sinter.broadcast_in_dim %[[S]]
// CHECK-NEXT: sinter.mul %[[C]], %[[B]]
func.func @recipe_reads_stored_values(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %x = sinter.add %a, %b : tensor<4x8xf32>
  %s = sinter.reduce_sum %x, dims = [1] keepdim : tensor<4x8xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  // expected-remark@+1 {{stored for a later kernel, not recomputed there: recomputing it would read 2 tensors of its size instead of it}}
  %c = sinter.sub %x, %sb : tensor<4x8xf32>
  %q = sinter.mul %c, %c : tensor<4x8xf32>
  %v = sinter.reduce_sum %q, dims = [1] keepdim : tensor<4x8xf32>
  %r = sinter.rsqrt %v : tensor<4x1xf32>
  // expected-remark@+1 {{stored for a later kernel, not recomputed there: its recipe has 'sinter.rsqrt' of another size, [4, 1]}}
  %rb = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  // expected-remark@+1 {{recomputed in 1 later kernel(s) instead of stored (2 ops)}}
  %h = sinter.mul %c, %rb : tensor<4x8xf32>
  %y = sinter.exp %h : tensor<4x8xf32>
  // expected-remark@+1 {{kept as its own op: matmul is a library call}}
  %n = sinter.matmul %y, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // The "backward": reads the centered input, 1/sigma and %h.
  // expected-remark@+1 {{not fused with its operand 'sinter.sub': the result would reach the fusion again through 'sinter.matmul'}}
  %d1 = sinter.mul %n, %c : tensor<4x8xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.broadcast_in_dim': the result would reach the fusion again through 'sinter.matmul'}}
  %d2 = sinter.mul %d1, %rb : tensor<4x8xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.mul': the result would reach the fusion again through 'sinter.matmul'}}
  %d3 = sinter.mul %n, %h : tensor<4x8xf32>
  %d4 = sinter.add %d2, %d3 : tensor<4x8xf32>
  return %d4 : tensor<4x8xf32>
}

// -----

// Reading a stored value must not make a recipe read more: %y read through
// %t (stored for the matmul) would read two tensors, %x and %t, so %y's
// reader computes %t again from %x, as before stored values were read.
// CHECK-LABEL: func.func @recipe_computes_what_reading_would_double
// CHECK: %[[T:.*]] = sinter.fusion %arg0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[N:.*]] = sinter.matmul %[[T]], %arg1
// CHECK: sinter.fusion %arg0, %[[N]] :
// CHECK: sinter.exp
func.func @recipe_computes_what_reading_would_double(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %t = sinter.exp %x : tensor<4x8xf32>
  // expected-remark@+1 {{recomputed in 1 later kernel(s) instead of stored (2 ops)}}
  %y = sinter.mul %x, %t : tensor<4x8xf32>
  // expected-remark@+1 {{kept as its own op: matmul is a library call}}
  %n = sinter.matmul %t, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.mul': the result would reach the fusion again through 'sinter.matmul'}}
  %d = sinter.mul %n, %y : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// Note [Scalars are copied, not shared]: two parameter updates of 65,536
// elements that share only a scaled learning rate (a scalar product,
// broadcast once after CSE) are two kernels, each with its own copy of the
// scalar recipe, so each can run as soon as its gradient exists; two small
// updates keep sharing it and stay one kernel.
// CHECK-LABEL: func.func @scalars_copied
// CHECK: sinter.fusion %{{.*}} : (tensor<f32>, tensor<f32>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
// CHECK: sinter.mul %{{.*}} : tensor<f32>
// CHECK: sinter.broadcast_in_dim
// CHECK: sinter.sub
// CHECK: sinter.fusion %{{.*}} : (tensor<f32>, tensor<f32>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
// CHECK: sinter.mul %{{.*}} : tensor<f32>
// CHECK: sinter.broadcast_in_dim
// CHECK: sinter.sub
// CHECK: sinter.fusion %{{.*}} : (tensor<f32>, tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: sinter.fusion
// CHECK: return
func.func @scalars_copied(%lr: tensor<f32>, %scale: tensor<f32>,
                          %w1: tensor<256x256xf32>, %g1: tensor<256x256xf32>,
                          %w2: tensor<256x256xf32>, %g2: tensor<256x256xf32>,
                          %b1: tensor<8xf32>, %h1: tensor<8xf32>,
                          %b2: tensor<8xf32>, %h2: tensor<8xf32>)
    -> (tensor<256x256xf32>, tensor<256x256xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = sinter.mul %lr, %scale : tensor<f32>
  %big = sinter.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<256x256xf32>
  %d1 = sinter.mul %g1, %big : tensor<256x256xf32>
  %n1 = sinter.sub %w1, %d1 : tensor<256x256xf32>
  %d2 = sinter.mul %g2, %big : tensor<256x256xf32>
  %n2 = sinter.sub %w2, %d2 : tensor<256x256xf32>
  %small = sinter.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<8xf32>
  %e1 = sinter.mul %h1, %small : tensor<8xf32>
  %m1 = sinter.sub %b1, %e1 : tensor<8xf32>
  %e2 = sinter.mul %h2, %small : tensor<8xf32>
  %m2 = sinter.sub %b2, %e2 : tensor<8xf32>
  return %n1, %n2, %m1, %m2 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A small value read through a broadcast is computed where it is read, but
// one the function also returns would be a result of the kernel: a row
// kernel's results are whole rows or one value per row, so the mask does
// not join the row reduction's kernel (it was written there as if it had
// 8 rows, into its 4).
// CHECK-LABEL: func.func @small_result_outside_a_row_kernel
// CHECK: %[[A:.*]]:2 = sinter.fusion
// CHECK: sinter.compare gt
// CHECK: sinter.mul
// CHECK: sinter.yield
// CHECK: %[[B:.*]] = sinter.fusion %[[A]]#1
// CHECK: sinter.reduce_sum
// CHECK-NOT: sinter.compare
// CHECK: sinter.yield
// CHECK: return %[[A]]#0, %[[B]]
func.func @small_result_outside_a_row_kernel(%m: tensor<4x1xf32>, %x: tensor<2x4x4xf32>) -> (tensor<4x1xi1>, tensor<2x4x4xf32>) {
  %quarter = sinter.constant dense<2.5e-01> : tensor<4x1xf32>
  %mask = sinter.compare gt, %m, %quarter : tensor<4x1xf32>
  %maskf = sinter.convert %mask : tensor<4x1xi1> -> tensor<4x1xf32>
  %b = sinter.broadcast_in_dim %maskf, dims = [1, 2] : tensor<4x1xf32> -> tensor<2x4x4xf32>
  // expected-remark@+1 {{stored for a later kernel, not recomputed there: its recipe has 'sinter.convert' of another size, [4, 1]}}
  %y = sinter.mul %x, %b : tensor<2x4x4xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.mul': 'sinter.compare': its 4 elements [4, 1] are neither the fusion's domain (8 x 4) nor one per row}}
  %s = sinter.reduce_sum %y, dims = [2] keepdim : tensor<2x4x4xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0, 1, 2] : tensor<2x4x1xf32> -> tensor<2x4x4xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.mul': the result would reach the fusion again through 'sinter.broadcast_in_dim', a cycle between kernels}}
  %z = sinter.sub %y, %sb : tensor<2x4x4xf32>
  return %mask, %z : tensor<4x1xi1>, tensor<2x4x4xf32>
}

// -----

// Note [Equality needs the stored bits] (FusionPolicy.cpp): the gradient of
// a maximum tests x == max(x); a kernel that recomputed x could round it
// apart from the x the maximum was taken of, so the test is computed with
// the maximum and stored, not recomputed after the product.
// CHECK-LABEL: func.func @equality_reads_the_stored_value
// CHECK: %[[A:.*]]:2 = sinter.fusion
// CHECK: sinter.sigmoid
// CHECK: sinter.reduce_max
// CHECK: sinter.compare eq
// CHECK: sinter.yield
// CHECK: %[[W:.*]] = sinter.matmul %[[A]]#0
// CHECK: sinter.fusion %[[A]]#1, %[[W]]
// CHECK-NOT: sinter.sigmoid
// CHECK: sinter.yield
func.func @equality_reads_the_stored_value(%x: tensor<8x4xf32>, %v: tensor<1x4xf32>) -> tensor<8x4xf32> {
  %s = sinter.sigmoid %x : tensor<8x4xf32>
  %m = sinter.reduce_max %s, dims = [1] keepdim : tensor<8x4xf32>
  // expected-remark@+1 {{kept as its own op: matmul is a library call}}
  %w = sinter.matmul %m, %v : tensor<8x1xf32>, tensor<1x4xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0, 1] : tensor<8x1xf32> -> tensor<8x4xf32>
  %eq = sinter.compare eq, %s, %mb : tensor<8x4xf32>
  // expected-remark@+1 {{stored for a later kernel, not recomputed there: its recipe tests a recomputed value for equality, which may round apart}}
  %f = sinter.convert %eq : tensor<8x4xi1> -> tensor<8x4xf32>
  // expected-remark@+1 {{not fused with its operand 'sinter.convert': the result would reach the fusion again through 'sinter.matmul', a cycle between kernels}}
  %r = sinter.mul %f, %w : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
