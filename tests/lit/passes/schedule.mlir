// RUN: sinter-opt %s --split-input-file --sinter-schedule | FileCheck %s

// Two independent branches, each a big temporary reduced to a small value.
// In the order written both big values are live at once; scheduled, each
// branch's reduction runs right after its producer, so one big value is live
// at a time. Dependencies hold: every value is defined before it is read.
// CHECK-LABEL: func.func @branches
// CHECK: %[[A:.*]] = sinter.matmul %arg0, %arg1
// CHECK-NEXT: %[[RA:.*]] = sinter.fusion %[[A]]
// CHECK: %[[B:.*]] = sinter.matmul %arg1, %arg0
// CHECK-NEXT: %[[RB:.*]] = sinter.fusion %[[B]]
// CHECK: sinter.fusion %[[RA]], %[[RB]]
func.func @branches(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<64xf32> {
  %a = sinter.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32>
  %b = sinter.matmul %y, %x : tensor<64x64xf32>, tensor<64x64xf32>
  %ra = sinter.fusion %a : (tensor<64x64xf32>) -> tensor<64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %s = sinter.reduce_sum %in, dims = [1] : tensor<64x64xf32>
    sinter.yield %s : tensor<64xf32>
  }
  %rb = sinter.fusion %b : (tensor<64x64xf32>) -> tensor<64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %s = sinter.reduce_sum %in, dims = [1] : tensor<64x64xf32>
    sinter.yield %s : tensor<64xf32>
  }
  %r = sinter.fusion %ra, %rb : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%p: tensor<64xf32>, %q: tensor<64xf32>):
    %s = sinter.add %p, %q : tensor<64xf32>
    sinter.yield %s : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// A chain has one order: nothing moves.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[A:.*]] = sinter.matmul %arg0, %arg0
// CHECK-NEXT: %[[B:.*]] = sinter.matmul %[[A]], %arg0
// CHECK-NEXT: return %[[B]]
func.func @chain(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = sinter.matmul %x, %x : tensor<8x8xf32>, tensor<8x8xf32>
  %b = sinter.matmul %a, %x : tensor<8x8xf32>, tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}
