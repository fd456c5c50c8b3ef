// RUN: sinter-translate %s --sinter-to-cpu-kernels | FileCheck %s

// The CPU renderer's kernel kinds, one function each, from fused IR (what
// sinter-opt --sinter-pipeline makes of a step). Kernels are numbered in
// program order across the module.

// An elementwise fusion: one loop over the rows, a vectorised loop over the
// row, each value an expression at the index it is stored at.
// CHECK-LABEL: extern "C" void sinter_kernel_0(const void *const *inputs, void *const *outputs) {
// CHECK: float *out0 = static_cast<float *>(outputs[0]);
// CHECK-NEXT: for (int64_t o = 0; o < 64; ++o)
// CHECK-NEXT: #pragma omp simd
// CHECK-NEXT: for (int64_t c = 0; c < 32; ++c) {
// CHECK-NEXT: const int64_t i = o * 32 + c;
// CHECK-NEXT: const float v0 = a0(i, c) + a1(i, c);
// CHECK-NEXT: const float v1 = v0 * a0(i, c);
// CHECK-NEXT: out0[i] = v1;
func.func @elementwise(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = sinter.fusion %x, %y : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>):
    %1 = sinter.add %a, %b : tensor<64x32xf32>
    %2 = sinter.mul %1, %a : tensor<64x32xf32>
    sinter.yield %2 : tensor<64x32xf32>
  }
  return %0 : tensor<64x32xf32>
}

// A row kernel (softmax): row by row, the max (NaN-propagating), the
// exponentials kept in a row-sized local array, their sum, then one loop
// over the row that writes the result.
// CHECK-LABEL: extern "C" void sinter_kernel_1(
// CHECK: for (int64_t r = 0; r < 4; ++r) {
// CHECK: float acc = -INFINITY;
// CHECK: if (x > acc || x != x) acc = x;
// CHECK: return sinter_exp(v2(i, c));
// CHECK: alignas(64) float v3_values[8];
// CHECK: float acc = 0;
// CHECK: float x = v3_stored(r * 8 + c, c);
// CHECK-NEXT: acc += x;
// CHECK: const float v6 = v3_stored(i, c) / v5(i, c);
// CHECK-NEXT: out0[i] = v6;
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = sinter.fusion %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = sinter.reduce_max %a, dims = [1] : tensor<4x8xf32>
    %2 = sinter.broadcast_in_dim %1, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
    %3 = sinter.sub %a, %2 : tensor<4x8xf32>
    %4 = sinter.exp %3 : tensor<4x8xf32>
    %5 = sinter.reduce_sum %4, dims = [1] : tensor<4x8xf32>
    %6 = sinter.broadcast_in_dim %5, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
    %7 = sinter.div %4, %6 : tensor<4x8xf32>
    sinter.yield %7 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// A reduction over the leading dimension (a bias gradient): blocks of 64
// columns summed down the rows into a vector of accumulators, in parallel
// over the blocks when the work is large enough.
// CHECK-LABEL: extern "C" void sinter_kernel_2(
// CHECK: #pragma omp parallel for schedule(static) if (32 > 64 && 2048 >= 32768)
// CHECK-NEXT: for (int64_t j0 = 0; j0 < 32; j0 += 64) {
// CHECK: for (int64_t q = 0; q < 64; ++q) {
// CHECK: float x = a0(q * 32 + j0 + c, j0 + c);
// CHECK-NEXT: acc[c] += x;
func.func @bias_gradient(%g: tensor<64x32xf32>) -> tensor<32xf32> {
  %0 = sinter.fusion %g : (tensor<64x32xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %1 = sinter.reduce_sum %a, dims = [0] : tensor<64x32xf32>
    sinter.yield %1 : tensor<32xf32>
  }
  return %0 : tensor<32xf32>
}

// A general reduction (a middle dimension): per kept element, its
// coordinates from the index, then a loop over the reduced ones.
// CHECK-LABEL: extern "C" void sinter_kernel_3(
// CHECK: for (int64_t j = 0; j < 32; ++j) {
// CHECK: int64_t k1 = restj % 8; restj /= 8;
// CHECK-NEXT: int64_t k0 = restj % 4; restj /= 4;
// CHECK-NEXT: for (int64_t q = 0; q < 16; ++q) {
// CHECK: float x = a0(0 + (k1) * 1 + (s0) * 8 + (k0) * 128,
func.func @middle(%g: tensor<4x16x8xf32>) -> tensor<4x8xf32> {
  %0 = sinter.fusion %g : (tensor<4x16x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x16x8xf32>):
    %1 = sinter.reduce_sum %a, dims = [1] : tensor<4x16x8xf32>
    sinter.yield %1 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// A matrix product takes a kernel number but is a library call of the
// Program, not a kernel (Note [Matrix products as data];
// tests/lit/compiler/program_translation.mlir shows its descriptor).
// CHECK-NOT: sinter_kernel_4
func.func @product(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %0 = sinter.matmul %a, %b : tensor<16x32xf32>, tensor<32x8xf32>
  return %0 : tensor<16x8xf32>
}
