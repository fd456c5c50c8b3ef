// RUN: sinter-translate %s --sinter-to-program | FileCheck %s

// Each function of a planned module as a runtime Program (ProgramTranslation.h)
// with its memory planned by the CPU target's rules (BufferAssignment.h).

// The exponential is written over the product it reads last (Note [In-place
// kernels]): buffers 2 and 3 share offset 0, and the arena holds two buffers,
// not three.
// CHECK-LABEL: // program @in_place
// CHECK-NEXT: arena 32768 bytes
// CHECK-NEXT: buffer %0: 16384 bytes, the caller's
// CHECK-NEXT: buffer %1: 16384 bytes, the caller's
// CHECK-NEXT: buffer %2: 16384 bytes, arena offset 0
// CHECK-NEXT: buffer %3: 16384 bytes, arena offset 0
// CHECK-NEXT: buffer %4: 16384 bytes, arena offset 16384
// CHECK-NEXT: launch gemm N,N m=64 n=64 k=64 lda=64 ldb=64 ldc=64 batch=1 strides=0,0,0 alpha=1 beta=0 onednn one-thread (%1, %0) -> (%2)  // matmul f32[64x64] <- program_translation.mlir:[[@LINE+11]]
// CHECK-NEXT: launch sinter_kernel_1 (%2) -> (%3)  // fusion(exp) f32[64x64] <- program_translation.mlir:[[@LINE+11]]
// CHECK-NEXT: launch gemm N,N m=64 n=64 k=64 lda=64 ldb=64 ldc=64 batch=1 strides=0,0,0 alpha=1 beta=0 onednn one-thread (%1, %3) -> (%4)  // matmul f32[64x64] <- program_translation.mlir:[[@LINE+15]]
// CHECK-NEXT: arguments (%0, %1)
// CHECK-NEXT: results %4 from the arena
// CHECK-NEXT: argument arg0: batch_input f32[64x64]
// CHECK-NEXT: argument arg1: batch_input f32[64x64]
// CHECK-NEXT: result result0: output f32[64x64]
// CHECK-NEXT: arena: 32768 bytes for 2 buffers over 3 launches
// CHECK: buffer 3 is written over buffer 2 (16384 bytes, in place)
func.func @in_place(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = sinter.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32>
  %b = sinter.fusion %a : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %e = sinter.exp %in : tensor<64x64xf32>
    sinter.yield %e : tensor<64x64xf32>
  }
  %c = sinter.matmul %b, %w : tensor<64x64xf32>, tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// A splat constant is filled just before its first reader; a slice outside
// a fusion is a view (the product reads rows 2-3 at byte 32 of the sum, its
// B operand); a
// reduction over the leading dimension takes a scratch buffer after its
// result; kernels are numbered across the module. Results handed out of the
// arena take their size class (64 bytes for 32 and 16).
// CHECK-LABEL: // program @views_and_fills
// CHECK-NEXT: arena 320 bytes
// CHECK: buffer %2: 128 bytes, arena offset 0
// CHECK-NEXT: buffer %3: 128 bytes, arena offset 128
// CHECK: fill %2 with 00 00 80 3f
// CHECK-NEXT: launch sinter_kernel_3 (%0, %2) -> (%3)
// CHECK-NEXT: launch gemm N,N m=4 n=2 k=4 lda=4 ldb=4 ldc=4 batch=1 strides=0,0,0 alpha=1 beta=0 onednn one-thread (%1, %3) at bytes [0, 32] -> (%4)  // matmul f32[2x4]
// CHECK-NEXT: launch sinter_kernel_5 (%3) -> (%5) scratch (%6)  // fusion(reduce_sum) f32[4]
// CHECK-NEXT: arguments (%0, %1)
// CHECK-NEXT: results %4 from the arena, %5 from the arena
// CHECK: 4         64          0      1      3  matmul f32[2x4]
// CHECK-NEXT: 5         64         64      2      3  fusion(reduce_sum) f32[4]
// CHECK-NEXT: 6         16        256      2      2  fusion(reduce_sum) f32[4]
func.func @views_and_fills(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %one = sinter.constant dense<1.0> : tensor<8x4xf32>
  %a = sinter.fusion %x, %one : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%p: tensor<8x4xf32>, %q: tensor<8x4xf32>):
    %e = sinter.add %p, %q : tensor<8x4xf32>
    sinter.yield %e : tensor<8x4xf32>
  }
  %s = sinter.slice %a, start = [2, 0], limit = [4, 4], step = [1, 1] : tensor<8x4xf32>
  %m = sinter.matmul %s, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %g = sinter.fusion %a : (tensor<8x4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<8x4xf32>):
    %r = sinter.reduce_sum %p, dims = [0] : tensor<8x4xf32>
    sinter.yield %r : tensor<4xf32>
  }
  return %m, %g : tensor<2x4xf32>, tensor<4xf32>
}

// Matrix products are library calls, descriptors in cuBLAS's column-major
// convention (Note [Matrix products as data]): A is the right operand. A
// batch times one shared matrix is one product of the batch's rows; with the
// left operand transposed it stays a batch, the shared matrix at stride 0.
// CHECK-LABEL: // program @products
// CHECK: launch gemm T,N m=16 n=8 k=8 lda=8 ldb=8 ldc=16 batch=1 strides=0,0,0 alpha=1 beta=0 onednn one-thread (%1, %0) -> (%4)
// CHECK-NEXT: launch gemm N,N m=4 n=4 k=8 lda=4 ldb=8 ldc=4 batch=2 strides=32,32,16 alpha=1 beta=0 onednn (%2, %0) -> (%5)
// CHECK-NEXT: launch gemm N,T m=16 n=8 k=4 lda=16 ldb=8 ldc=16 batch=2 strides=0,32,128 alpha=1 beta=0 onednn (%3, %0) -> (%6)
func.func @products(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %y: tensor<2x8x4xf32>,
                    %v: tensor<4x16xf32>) -> (tensor<2x4x16xf32>, tensor<2x4x4xf32>, tensor<2x8x16xf32>) {
  %0 = sinter.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  %1 = sinter.matmul %x, %y : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  %2 = sinter.matmul %x, %v transpose_lhs : tensor<2x4x8xf32>, tensor<4x16xf32>
  return %0, %1, %2 : tensor<2x4x16xf32>, tensor<2x4x4xf32>, tensor<2x8x16xf32>
}


// Results that no kernel writes in place and the arena does not hold are
// copied after the last launch, each by a copy step (Note [One list of
// steps]): an argument returned as is, and a constant only returned (filled
// after the last launch); the signature names each value with its dtype and
// shape (a scalar has none).
// CHECK-LABEL: // program @copies
// CHECK: launch sinter_kernel_{{[0-9]+}} (%0) -> (%3)
// CHECK-NEXT: fill %2 with 00 00 00 40
// CHECK-NEXT: copy %0 into result 0
// CHECK-NEXT: copy %2 into result 2
// CHECK-NEXT: arguments (%0, %1)
// CHECK-NEXT: results %0, %3 from the arena, %2
// CHECK-NEXT: argument arg0: batch_input f32[4x2]
// CHECK-NEXT: argument arg1: batch_input i32[]
// CHECK-NEXT: result result0: output f32[4x2]
// CHECK-NEXT: result result1: output f32[4x2]
// CHECK-NEXT: result result2: output f32[]
func.func @copies(%x: tensor<4x2xf32>, %n: tensor<i32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<f32>) {
  %two = sinter.constant dense<2.0> : tensor<f32>
  %e = sinter.fusion %x : (tensor<4x2xf32>) -> tensor<4x2xf32> {
  ^bb0(%p: tensor<4x2xf32>):
    %y = sinter.exp %p : tensor<4x2xf32>
    sinter.yield %y : tensor<4x2xf32>
  }
  return %x, %e, %two : tensor<4x2xf32>, tensor<4x2xf32>, tensor<f32>
}
