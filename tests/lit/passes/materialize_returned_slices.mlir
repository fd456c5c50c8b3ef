// RUN: sinter-opt %s --split-input-file --sinter-materialize-returned-slices | FileCheck %s

// A returned slice is a view into its operand's buffer: a fusion copies it
// into a buffer of its own.
// CHECK-LABEL: func.func @returned_slice
// CHECK: %[[F:.*]] = sinter.fusion %arg0 : (tensor<8xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[S:.*]] = sinter.slice %[[IN]], start = [2], limit = [6], step = [1] : tensor<8xf32>
// CHECK-NEXT: sinter.yield %[[S]] : tensor<4xf32>
// CHECK: return %[[F]] : tensor<4xf32>
func.func @returned_slice(%x: tensor<8xf32>) -> tensor<4xf32> {
  %s = sinter.slice %x, start = [2], limit = [6], step = [1] : tensor<8xf32>
  return %s : tensor<4xf32>
}

// -----

// A chain of views with a slice in it is copied whole: the reshape of the
// slice is cloned into the fusion after it.
// CHECK-LABEL: func.func @reshaped_slice
// CHECK: %[[F:.*]] = sinter.fusion %arg0 : (tensor<4x8xf32>) -> tensor<16xf32> {
// CHECK: sinter.slice
// CHECK-NEXT: sinter.reshape
// CHECK-NEXT: sinter.yield
// CHECK: return %[[F]]
func.func @reshaped_slice(%x: tensor<4x8xf32>) -> tensor<16xf32> {
  %s = sinter.slice %x, start = [2, 0], limit = [4, 8], step = [1, 1] : tensor<4x8xf32>
  %r = sinter.reshape %s : tensor<2x8xf32> -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Reshapes alone keep the index: the result stays a view of its operand's
// buffer, and nothing is copied.
// CHECK-LABEL: func.func @views_that_stay
// CHECK-NOT: sinter.fusion
// CHECK: %[[R:.*]] = sinter.reshape %arg0
// CHECK: return %[[R]]
func.func @views_that_stay(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %r = sinter.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  return %r : tensor<32xf32>
}
