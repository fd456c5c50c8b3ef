// RUN: sinter-translate %s --sinter-to-program-json | FileCheck %s

// A planned function as a Program file holds it (Note [The Program as a
// file] in sinter/runtime/ProgramFile.h): the format and its version, the
// steps in order (a fill before its first reader, the launches, a copy of
// an argument returned as is), the signature with names, roles, dtypes and
// shapes, and the report apart.
// CHECK-LABEL: // program @steps
// CHECK: "format": "sinter-program",
// CHECK: "signature": {
// CHECK-NEXT: "arguments": [
// CHECK-NEXT: {
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "name": "arg0",
// CHECK-NEXT: "role": "batch_input",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 8,
// CHECK-NEXT: 4
// CHECK-NEXT: ]
// CHECK: "steps": [
// CHECK-NEXT: {
// CHECK-NEXT: "element": "0000803f",
// CHECK-NEXT: "kind": "fill",
// CHECK: "kind": "kernel",
// CHECK: "shape": {
// CHECK-NEXT: "block": [
// CHECK: "kind": "gemm",
// CHECK: "inputs": [
// CHECK-NEXT: 0
// CHECK-NEXT: ],
// CHECK-NEXT: "kind": "copy",
// CHECK-NEXT: "result": 1
// CHECK: "version": 2
func.func @steps(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %one = sinter.constant dense<1.0> : tensor<8x4xf32>
  %a = sinter.fusion %x, %one : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%p: tensor<8x4xf32>, %q: tensor<8x4xf32>):
    %e = sinter.add %p, %q : tensor<8x4xf32>
    sinter.yield %e : tensor<8x4xf32>
  }
  %c = sinter.matmul %a, %w : tensor<8x4xf32>, tensor<4x4xf32>
  return %c, %x : tensor<8x4xf32>, tensor<8x4xf32>
}
