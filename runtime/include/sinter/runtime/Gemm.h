//===- Gemm.h - a matrix product as data, in cuBLAS's convention -*- C++ -*-===//
//
// Note [Matrix products as data]
// A step's matrix products are not kernels the compiler writes but calls of
// a library (cuBLAS or cuBLASLt on a GPU, oneDNN or OpenBLAS on the CPU), so
// the Program carries each as a descriptor the runtime hands to the library:
// BLAS's column-major C = alpha op(A) op(B) + beta C, with cuBLAS's names
// (cublasSgemmStridedBatched: transa, transb, m, n, k, lda, ldb, ldc, batch
// count and strides, alpha, beta), and an epilogue as cuBLASLt's (a bias
// added to every column). The dialect's matmul is row-major (PyTorch's
// layout): a row-major matrix is the column-major transpose of itself, so
// row-major C[M x N] = op(X)[M x K] op(W)[K x N] is column-major
// Cᵀ = op(W)ᵀ op(X)ᵀ: m = N, n = M, A = W, B = X, each operand's flag its
// own, each leading dimension its row length (gemmOfRowMajor). The CPU
// executable carries the descriptor out with exactly these arguments
// (runGemmOnHost, through the kernel library's sinter_gemm_v1 in
// kernels/cpu/gemm.h: cblas_sgemm(CblasColMajor, ...) or oneDNN's sgemm,
// whose row-major interface takes the operands swapped), so the mapping the
// CUDA backend hands to cuBLAS runs on every product of every step here.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_GEMM_H
#define SINTER_RUNTIME_GEMM_H

#include "sinter/runtime/Status.h"

#include <cstdint>
#include <string>

namespace sinter::runtime {

/// C = alpha op(A) op(B) + beta C for each of `batch` matrices, column-major:
/// op(A) is m x k, op(B) k x n, C m x n; element (i, j) of a matrix with
/// leading dimension ld is at i + j * ld. Matrix z of the batch starts
/// z * stride elements after the first (stride 0: one matrix shared by the
/// whole batch).
struct Gemm {
  bool transa = false;
  bool transb = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  float alpha = 1;
  float beta = 0;
  /// After the product: Bias adds bias[i] to row i of every column of C
  /// (cuBLASLt's CUBLASLT_EPILOGUE_BIAS; in the row-major view, a bias per
  /// output feature, added to every row).
  enum class Epilogue : uint8_t { None, Bias };
  Epilogue epilogue = Epilogue::None;
  /// The product may round A's and B's elements to TF32 (10 bits of
  /// mantissa, f32's range) on tensor cores, accumulating in f32: cuBLAS's
  /// CUBLAS_TF32_TENSOR_OP_MATH, PyTorch's allow_tf32. Only where asked
  /// (CompilerConfig::allow_tf32) and only on a GPU; the host and the CUDA
  /// simulator compute in f32 either way. The bias epilogue stays f32.
  bool tf32 = false;

  friend bool operator==(const Gemm &, const Gemm &) = default;
};

/// The descriptor of a row-major product C[M x N] = op(X) op(W) (X is
/// [M x K] or, transposed, [K x M]; W is [K x N] or [N x K]) over `batch`
/// matrices, X's and C's consecutive, W's too unless `sharedRight` (one W
/// for the batch: stride 0).
Gemm gemmOfRowMajor(bool transposeX, bool transposeW, int64_t M, int64_t N, int64_t K,
                    int64_t batch, bool sharedRight);

/// "gemm T,N m=256 n=1024 k=512 lda=512 ldb=512 ldc=256 batch=1 strides=0,0,0 alpha=1 beta=0".
std::string describe(const Gemm &gemm);

/// How the host carries a product out (chosen by the compiler's CPU target,
/// Note [Which library multiplies] in compiler/lib/Codegen/CpuLibrary.cpp).
struct HostGemmChoice {
  /// OpenBLAS's cblas_sgemm; otherwise oneDNN's dnnl_sgemm.
  bool openBlas = false;
  /// On the calling thread only (Note [Small products on one thread]).
  bool oneThread = false;
  friend bool operator==(const HostGemmChoice &, const HostGemmChoice &) = default;
};

/// Checks that `gemm`'s sizes, leading dimensions and strides describe
/// matrices that fit: what cuBLAS would refuse with
/// CUBLAS_STATUS_INVALID_VALUE, named.
Status checkGemm(const Gemm &gemm);

/// The entry point every CPU kernel library exports for matrix products
/// (`sinter_gemm_v1`, kernels/cpu/gemm.h): a descriptor's fields, the
/// operands, the bias (null: no epilogue) and the host's choice.
using HostGemm = void (*)(int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                          const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                          float *c, int64_t ldc, int64_t batch, int64_t strideA, int64_t strideB,
                          int64_t strideC, const float *bias, int openBlas, int oneThread);
inline constexpr const char kHostGemmSymbol[] = "sinter_gemm_v1";

/// Runs `gemm` on the host through `run` (a kernel library's
/// sinter_gemm_v1): a batch of several matrices one per thread, each product
/// on one; a single product on the library's threads, or on the calling
/// thread only with `choice.oneThread`. `bias` holds m floats
/// (Epilogue::Bias), else may be null. With k = 0, C becomes beta C, then
/// the bias.
/// REQUIRES: checkGemm(gemm) is ok.
void runGemmOnHost(HostGemm run, const Gemm &gemm, HostGemmChoice choice, const float *a,
                   const float *b, float *c, const float *bias = nullptr);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_GEMM_H
