// Folders and canonicalization patterns of the sinter dialect.
// RUN: sinter-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @identity_layout_ops
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identity_layout_ops(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = sinter.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = sinter.transpose %x, perm = [0, 1] : tensor<4x8xf32>
  %2 = sinter.broadcast_in_dim %x, dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = sinter.convert %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = sinter.slice %x, start = [0, 0], limit = [4, 8], step = [1, 1] : tensor<4x8xf32>
  %5 = sinter.concat (%x), dim = 1 : tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @arithmetic_identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]], %[[I]]
func.func @arithmetic_identities(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = sinter.constant dense<0.0> : tensor<4xf32>
  %one = sinter.constant dense<1.0> : tensor<4xf32>
  %izero = sinter.constant dense<0> : tensor<4xi32>
  %ione = sinter.constant dense<1> : tensor<4xi32>
  %0 = sinter.add %x, %zero : tensor<4xf32>
  %1 = sinter.add %zero, %x : tensor<4xf32>
  %2 = sinter.sub %x, %zero : tensor<4xf32>
  %3 = sinter.mul %one, %x : tensor<4xf32>
  %4 = sinter.div %x, %one : tensor<4xf32>
  %5 = sinter.add %i, %izero : tensor<4xi32>
  %6 = sinter.mul %i, %ione : tensor<4xi32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Multiplying by zero is not folded: x * 0 is NaN for x = inf or NaN.
// CHECK-LABEL: func.func @no_fold_mul_zero
// CHECK: %[[Z:.*]] = sinter.constant dense<0.000000e+00>
// CHECK: %[[M:.*]] = sinter.mul %{{.*}}, %[[Z]]
// CHECK: return %[[M]]
func.func @no_fold_mul_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = sinter.constant dense<0.0> : tensor<4xf32>
  %0 = sinter.mul %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @double_negation
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @double_negation(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = sinter.neg %x : tensor<4xf32>
  %1 = sinter.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @constant_folding
// CHECK-DAG: %[[F:.*]] = sinter.constant dense<[3.000000e+00, 2.700000e+01]> : tensor<2xf32>
// CHECK-DAG: %[[I:.*]] = sinter.constant dense<[-2, 14]> : tensor<2xi64>
// CHECK-DAG: %[[D:.*]] = sinter.constant dense<2.500000e-01> : tensor<2xf32>
// CHECK: return %[[F]], %[[I]], %[[D]]
// (([1, 3] + [3, 7]) * [1, 3]) - [1, 3] = [3, 27];  -(-(([1, 2] - [3, -5]) * [1, 2])) = [-2, 14]
func.func @constant_folding() -> (tensor<2xf32>, tensor<2xi64>, tensor<2xf32>) {
  %a = sinter.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %b = sinter.constant dense<[3.0, 7.0]> : tensor<2xf32>
  %0 = sinter.add %a, %b : tensor<2xf32>
  %1 = sinter.mul %0, %a : tensor<2xf32>
  %2 = sinter.sub %1, %a : tensor<2xf32>
  %i = sinter.constant dense<[1, 2]> : tensor<2xi64>
  %j = sinter.constant dense<[3, -5]> : tensor<2xi64>
  %3 = sinter.sub %i, %j : tensor<2xi64>
  %4 = sinter.mul %3, %i : tensor<2xi64>
  %5 = sinter.neg %4 : tensor<2xi64>
  %6 = sinter.neg %5 : tensor<2xi64>
  %one = sinter.constant dense<1.0> : tensor<2xf32>
  %four = sinter.constant dense<4.0> : tensor<2xf32>
  %7 = sinter.div %one, %four : tensor<2xf32>
  return %2, %6, %7 : tensor<2xf32>, tensor<2xi64>, tensor<2xf32>
}

// -----

// Integer division is not folded (division by zero has no value).
// CHECK-LABEL: func.func @no_fold_integer_division
// CHECK: sinter.div
func.func @no_fold_integer_division() -> tensor<2xi32> {
  %a = sinter.constant dense<[1, 2]> : tensor<2xi32>
  %b = sinter.constant dense<[0, 1]> : tensor<2xi32>
  %0 = sinter.div %a, %b : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @layout_chains
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = sinter.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT: %[[T:.*]] = sinter.transpose %[[X]], perm = [2, 0, 1] : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[R]], %[[T]], %[[X]]
func.func @layout_chains(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %0 = sinter.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = sinter.reshape %0 : tensor<6x4xf32> -> tensor<24xf32>
  // Composed: result dim i is x's dim inner[outer[i]] = [1, 2, 0][[1, 2, 0][i]] = [2, 0, 1].
  %2 = sinter.transpose %x, perm = [1, 2, 0] : tensor<2x3x4xf32>
  %3 = sinter.transpose %2, perm = [1, 2, 0] : tensor<3x4x2xf32>
  // A transpose and its inverse cancel.
  %4 = sinter.transpose %x, perm = [2, 0, 1] : tensor<2x3x4xf32>
  %5 = sinter.transpose %4, perm = [1, 2, 0] : tensor<4x2x3xf32>
  return %1, %3, %5 : tensor<24xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @splat_constants_through_layout
// CHECK-DAG: %[[B:.*]] = sinter.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[T:.*]] = sinter.constant dense<2.000000e+00> : tensor<8x4xf32>
// CHECK-DAG: %[[R:.*]] = sinter.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// CHECK: return %[[B]], %[[T]], %[[R]]
func.func @splat_constants_through_layout() -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4xi32>) {
  %c = sinter.constant dense<2.0> : tensor<8xf32>
  %0 = sinter.broadcast_in_dim %c, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %1 = sinter.transpose %0, perm = [1, 0] : tensor<4x8xf32>
  %m = sinter.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %2 = sinter.reshape %m : tensor<2x2xi32> -> tensor<4xi32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @select_folds
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[P:.*]]: tensor<4xi1>)
// CHECK-NEXT: return %[[A]], %[[B]], %[[A]]
func.func @select_folds(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = sinter.constant dense<true> : tensor<4xi1>
  %f = sinter.constant dense<false> : tensor<4xi1>
  %0 = sinter.select %t, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = sinter.select %f, %a, %b : tensor<4xi1>, tensor<4xf32>
  %2 = sinter.select %p, %a, %a : tensor<4xi1>, tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @empty_reductions
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @empty_reductions(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = sinter.reduce_sum %x, dims = [] : tensor<4x8xf32>
  %1 = sinter.reduce_max %x, dims = [] keepdim : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Dead pure ops are removed; all_reduce has side effects (every rank must
// reach it) and stays, twice: it is never merged by CSE.
// CHECK-LABEL: func.func @dce_and_collectives
// CHECK-NOT: sinter.exp
// CHECK-COUNT-2: sinter.all_reduce sum
// CHECK-NOT: sinter.all_reduce
func.func @dce_and_collectives(%x: tensor<4xf32>) {
  %0 = sinter.exp %x : tensor<4xf32>
  %1 = sinter.all_reduce sum, %x : tensor<4xf32>
  %2 = sinter.all_reduce sum, %x : tensor<4xf32>
  return
}

// -----

// A transpose of a matmul operand's last two dims becomes the operand's flag;
// other permutations stay.
// CHECK-LABEL: func.func @transpose_into_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<2x5x8xf32>, %[[C:.*]]: tensor<5x2x8xf32>)
// CHECK-NEXT: %[[M:.*]] = sinter.matmul %[[A]], %[[A]] transpose_lhs : tensor<8x4xf32>, tensor<8x4xf32>
// CHECK-NEXT: %[[N:.*]] = sinter.matmul %[[B]], %[[B]] transpose_rhs : tensor<2x5x8xf32>, tensor<2x5x8xf32>
// CHECK-NEXT: %[[T:.*]] = sinter.transpose %[[C]], perm = [1, 0, 2]
// CHECK-NEXT: %[[P:.*]] = sinter.matmul %[[T]], %[[B]] transpose_rhs
// CHECK-NEXT: return %[[M]], %[[N]], %[[P]]
func.func @transpose_into_matmul(%a: tensor<8x4xf32>, %b: tensor<2x5x8xf32>, %c: tensor<5x2x8xf32>) -> (tensor<4x4xf32>, tensor<2x5x5xf32>, tensor<2x5x5xf32>) {
  %at = sinter.transpose %a, perm = [1, 0] : tensor<8x4xf32>
  %0 = sinter.matmul %at, %a : tensor<4x8xf32>, tensor<8x4xf32>
  %bt = sinter.transpose %b, perm = [0, 2, 1] : tensor<2x5x8xf32>
  %1 = sinter.matmul %b, %bt : tensor<2x5x8xf32>, tensor<2x8x5xf32>
  %ct = sinter.transpose %c, perm = [1, 0, 2] : tensor<5x2x8xf32>
  %2 = sinter.matmul %ct, %bt : tensor<2x5x8xf32>, tensor<2x8x5xf32>
  return %0, %1, %2 : tensor<4x4xf32>, tensor<2x5x5xf32>, tensor<2x5x5xf32>
}

// -----

// A transposed matmul result (a weight's gradient) is computed transposed by
// swapping the operands and flipping both flags; not when the matmul has
// another use, or when its operands' ranks differ.
// CHECK-LABEL: func.func @transpose_of_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8x5xf32>, %[[C:.*]]: tensor<2x3x4xf32>, %[[D:.*]]: tensor<4x5xf32>)
// CHECK-NEXT: %[[M:.*]] = sinter.matmul %[[B]], %[[A]] transpose_lhs : tensor<8x5xf32>, tensor<8x4xf32>
// CHECK-NEXT: %[[N:.*]] = sinter.matmul %[[C]], %[[D]] : tensor<2x3x4xf32>, tensor<4x5xf32>
// CHECK-NEXT: %[[T:.*]] = sinter.transpose %[[N]], perm = [0, 2, 1]
// CHECK-NEXT: return %[[M]], %[[T]]
func.func @transpose_of_matmul(%a: tensor<8x4xf32>, %b: tensor<8x5xf32>, %c: tensor<2x3x4xf32>, %d: tensor<4x5xf32>) -> (tensor<5x4xf32>, tensor<2x5x3xf32>) {
  %0 = sinter.matmul %a, %b transpose_lhs : tensor<8x4xf32>, tensor<8x5xf32>
  %1 = sinter.transpose %0, perm = [1, 0] : tensor<4x5xf32>
  %2 = sinter.matmul %c, %d : tensor<2x3x4xf32>, tensor<4x5xf32>
  %3 = sinter.transpose %2, perm = [0, 2, 1] : tensor<2x3x5xf32>
  return %1, %3 : tensor<5x4xf32>, tensor<2x5x3xf32>
}

// -----

// pow by a splat 2 or 3 becomes multiplications; other exponents stay.
// CHECK-LABEL: func.func @pow_by_constant
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[H:.*]] = sinter.constant dense<5.000000e-01>
// CHECK-NEXT: %[[S:.*]] = sinter.mul %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[S2:.*]] = sinter.mul %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = sinter.mul %[[S2]], %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[P:.*]] = sinter.pow %[[X]], %[[H]] : tensor<4xf32>
// CHECK-NEXT: return %[[S]], %[[C]], %[[P]]
func.func @pow_by_constant(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %two = sinter.constant dense<2.0> : tensor<4xf32>
  %three = sinter.constant dense<3.0> : tensor<4xf32>
  %half = sinter.constant dense<0.5> : tensor<4xf32>
  %0 = sinter.pow %x, %two : tensor<4xf32>
  %1 = sinter.pow %x, %three : tensor<4xf32>
  %2 = sinter.pow %x, %half : tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A fusion that yields a value and its reshape (a gradient read by two
// matmuls in two shapes) writes it once; the reshape moves outside, where it
// is a view of the same buffer. A reshape of an internal value alone is
// yielded as that value, reshaped outside.
// CHECK-LABEL: func.func @reshaped_results_are_views
// CHECK: %[[F:.*]]:2 = sinter.fusion %{{.*}} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: sinter.reshape
// CHECK: sinter.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V:.*]] = sinter.reshape %[[F]]#0 : tensor<4x8xf32> -> tensor<2x2x8xf32>
// CHECK-NEXT: %[[W:.*]] = sinter.reshape %[[F]]#1 : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NEXT: return %[[F]]#0, %[[V]], %[[W]]
func.func @reshaped_results_are_views(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>) {
  %r:3 = sinter.fusion %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>) {
  ^bb0(%in: tensor<4x8xf32>):
    %e = sinter.exp %in : tensor<4x8xf32>
    %v = sinter.reshape %e : tensor<4x8xf32> -> tensor<2x2x8xf32>
    %t = sinter.tanh %in : tensor<4x8xf32>
    %w = sinter.reshape %t : tensor<4x8xf32> -> tensor<32xf32>
    sinter.yield %e, %v, %w : tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>
}

// -----

// A fusion that yields a broadcast (a per-channel scale at an activation's
// size) yields the small value instead; the fusion that reads it broadcasts
// it while reading. A broadcast of an input is read from that input.
// CHECK-LABEL: func.func @broadcast_results_move_into_readers
// CHECK: %[[F:.*]] = sinter.fusion %[[S:.*]] : (tensor<4x1xf32>) -> tensor<4x1xf32> {
// CHECK: sinter.rsqrt
// CHECK-NOT: sinter.broadcast_in_dim
// CHECK: sinter.yield %{{.*}} : tensor<4x1xf32>
// CHECK: sinter.fusion %[[F]], %[[S]], %{{.*}} : (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x1xf32>, %[[B:.*]]: tensor<4x1xf32>, %{{.*}}: tensor<4x8xf32>):
// CHECK-DAG: sinter.broadcast_in_dim %[[A]], dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-DAG: sinter.broadcast_in_dim %[[B]], dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
func.func @broadcast_results_move_into_readers(%s: tensor<4x1xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %b:2 = sinter.fusion %s : (tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%in: tensor<4x1xf32>):
    %r = sinter.rsqrt %in : tensor<4x1xf32>
    %wide = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %plain = sinter.broadcast_in_dim %in, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    sinter.yield %wide, %plain : tensor<4x8xf32>, tensor<4x8xf32>
  }
  %y = sinter.fusion %b#0, %b#1, %x : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%p: tensor<4x8xf32>, %q: tensor<4x8xf32>, %z: tensor<4x8xf32>):
    %m = sinter.mul %p, %z : tensor<4x8xf32>
    %n = sinter.add %m, %q : tensor<4x8xf32>
    sinter.yield %n : tensor<4x8xf32>
  }
  return %y : tensor<4x8xf32>
}

// -----

// A contiguous slice of an input that a fusion yields (rows of a weight)
// moves outside it, where it is a view at an offset, no copy. A slice of
// columns is not contiguous and stays a kernel's copy; so does a slice the
// function returns (it needs a buffer of its own).
// CHECK-LABEL: func.func @contiguous_slices_are_views
// CHECK: %[[F:.*]]:2 = sinter.fusion %[[W:.*]] : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<2x4xf32>)
// CHECK: %[[ROWS:.*]] = sinter.slice %[[W]], start = [2, 0], limit = [4, 4], step = [1, 1] : tensor<6x4xf32>
// CHECK: %[[R:.*]] = sinter.fusion %[[ROWS]], %[[F]]#0
// CHECK: return %[[R]], %[[F]]#1
func.func @contiguous_slices_are_views(%w: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s:3 = sinter.fusion %w : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<6x2xf32>, tensor<2x4xf32>) {
  ^bb0(%in: tensor<6x4xf32>):
    %rows = sinter.slice %in, start = [2, 0], limit = [4, 4], step = [1, 1] : tensor<6x4xf32>
    %cols = sinter.slice %in, start = [0, 1], limit = [6, 3], step = [1, 1] : tensor<6x4xf32>
    %kept = sinter.slice %in, start = [4, 0], limit = [6, 4], step = [1, 1] : tensor<6x4xf32>
    sinter.yield %rows, %cols, %kept : tensor<2x4xf32>, tensor<6x2xf32>, tensor<2x4xf32>
  }
  %r = sinter.fusion %s#0, %s#1 : (tensor<2x4xf32>, tensor<6x2xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<6x2xf32>):
    %t = sinter.slice %b, start = [0, 0], limit = [2, 2], step = [1, 1] : tensor<6x2xf32>
    %u = sinter.reshape %t : tensor<2x2xf32> -> tensor<4xf32>
    %v = sinter.reshape %u : tensor<4xf32> -> tensor<1x4xf32>
    %x = sinter.broadcast_in_dim %v, dims = [0, 1] : tensor<1x4xf32> -> tensor<2x4xf32>
    %y = sinter.add %a, %x : tensor<2x4xf32>
    sinter.yield %y : tensor<2x4xf32>
  }
  return %r, %s#2 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// The gradients of three slices that tile a tensor, each a concat of zeros
// around its part, summed: one concat of the three parts.
// CHECK-LABEL: func.func @sum_of_unslices
// CHECK-SAME: (%[[A:.*]]: tensor<4x2xf32>, %[[B:.*]]: tensor<4x3xf32>, %[[C:.*]]: tensor<4x1xf32>)
// CHECK-NEXT: %[[R:.*]] = sinter.concat(%[[A]], %[[B]], %[[C]]), dim = 1
// CHECK-NEXT: return %[[R]]
func.func @sum_of_unslices(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<4x1xf32>) -> tensor<4x6xf32> {
  %z4 = sinter.constant dense<0.0> : tensor<4x4xf32>
  %z2 = sinter.constant dense<0.0> : tensor<4x2xf32>
  %z1 = sinter.constant dense<0.0> : tensor<4x1xf32>
  %z5 = sinter.constant dense<0.0> : tensor<4x5xf32>
  %ga = sinter.concat (%a, %z4), dim = 1 : tensor<4x2xf32>, tensor<4x4xf32>
  %gb = sinter.concat (%z2, %b, %z1), dim = 1 : tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x1xf32>
  %gc = sinter.concat (%z5, %c), dim = 1 : tensor<4x5xf32>, tensor<4x1xf32>
  %0 = sinter.add %ga, %gb : tensor<4x6xf32>
  %1 = sinter.add %0, %gc : tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// A splat piece is cut where the other concat has a boundary; a boundary
// inside a piece that is not a splat constant leaves the sum as it is.
// CHECK-LABEL: func.func @sums_of_concats
// CHECK-SAME: (%[[A:.*]]: tensor<1x4xf32>, %[[B:.*]]: tensor<1x4xf32>, %[[Y:.*]]: tensor<1x4xf32>, %[[W:.*]]: tensor<1x4xf32>, %[[X:.*]]: tensor<3x4xf32>, %[[V:.*]]: tensor<2x4xf32>)
// CHECK: %[[ONES:.*]] = sinter.constant dense<1.000000e+00> : tensor<1x4xf32>
// CHECK-DAG: %[[S0:.*]] = sinter.add %[[B]], %[[ONES]] : tensor<1x4xf32>
// CHECK-DAG: %[[S1:.*]] = sinter.add %[[Y]], %[[ONES]] : tensor<1x4xf32>
// CHECK-DAG: %[[S2:.*]] = sinter.add %[[A]], %[[W]] : tensor<1x4xf32>
// CHECK-DAG: %[[SPLIT:.*]] = sinter.concat(%[[S0]], %[[S1]], %[[S2]]), dim = 0
// CHECK-DAG: %[[R:.*]] = sinter.concat(%[[V]], %[[X]]), dim = 0
// CHECK-DAG: %[[S:.*]] = sinter.concat(%[[X]], %[[V]]), dim = 0
// CHECK-DAG: %[[KEPT:.*]] = sinter.add %[[R]], %[[S]] : tensor<5x4xf32>
// CHECK: return %[[SPLIT]], %[[KEPT]]
func.func @sums_of_concats(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>, %y: tensor<1x4xf32>, %w: tensor<1x4xf32>, %x: tensor<3x4xf32>, %v: tensor<2x4xf32>) -> (tensor<3x4xf32>, tensor<5x4xf32>) {
  %ones = sinter.constant dense<1.0> : tensor<2x4xf32>
  %p = sinter.concat (%ones, %a), dim = 0 : tensor<2x4xf32>, tensor<1x4xf32>
  %q = sinter.concat (%b, %y, %w), dim = 0 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
  %0 = sinter.add %p, %q : tensor<3x4xf32>
  %r = sinter.concat (%v, %x), dim = 0 : tensor<2x4xf32>, tensor<3x4xf32>
  %s = sinter.concat (%x, %v), dim = 0 : tensor<3x4xf32>, tensor<2x4xf32>
  %1 = sinter.add %r, %s : tensor<5x4xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<5x4xf32>
}
