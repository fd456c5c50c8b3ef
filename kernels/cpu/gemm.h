//===- gemm.h - matrix products from their descriptors, on the host -------===//
//
// Every CPU kernel library exports `sinter_gemm_v1` (this header is included
// once per library, through kernel.h): the CPU executable calls it for each
// library call of a Program with its descriptor's fields, in cuBLAS's
// column-major convention (Note [Matrix products as data] in
// sinter/runtime/Gemm.h). It lives in the kernel library, not in the runtime,
// so that OpenMP, oneDNN and OpenBLAS load with the first kernel library,
// after the process has set how OpenMP's threads wait and how many there are
// (Note [OpenMP's idle threads] in runtime/lib/Program.cpp): OpenMP reads
// both once, when it loads.
//
// A batch of several matrices runs one product per thread (neither library
// nests parallel regions); a single product on the library's threads, or on
// the calling thread only (Note [Small products on one thread] in
// compiler/lib/Codegen/CpuLibrary.cpp), never inside a parallel region, not
// even an inactive one (libgomp would start new threads for the library's own
// region instead of waking its pool's). oneDNN's sgemm is row-major: a
// column-major matrix is the row-major transpose of itself, so the
// column-major C = op(A) op(B) is the row-major Cᵀ = op(B)ᵀ op(A)ᵀ, B first.
// With k = 0, C becomes beta C (without reading C when beta is 0), then the
// bias, as the libraries would.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_GEMM_H
#define SINTER_KERNELS_CPU_GEMM_H

#include "cpu/sgemm.h"

#include <cblas.h>
#include <cstdint>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

namespace sinter_gemm_detail {

struct Call {
  int transa, transb;
  int64_t m, n, k;
  float alpha;
  int64_t lda, ldb, ldc;
  float beta;
  int openBlas;
};

static inline void one(const Call &g, const float *a, const float *b, float *c, const float *bias) {
  if (g.k == 0) {
    for (int64_t j = 0; j < g.n; ++j)
      for (int64_t i = 0; i < g.m; ++i) {
        float &x = c[i + j * g.ldc];
        x = g.beta == 0 ? 0.0f : g.beta * x;
      }
  } else if (g.openBlas) {
    cblas_sgemm(CblasColMajor, g.transa ? CblasTrans : CblasNoTrans,
                g.transb ? CblasTrans : CblasNoTrans, static_cast<blasint>(g.m),
                static_cast<blasint>(g.n), static_cast<blasint>(g.k), g.alpha, a,
                static_cast<blasint>(g.lda), b, static_cast<blasint>(g.ldb), g.beta, c,
                static_cast<blasint>(g.ldc));
  } else {
    dnnl_sgemm(g.transb ? 'T' : 'N', g.transa ? 'T' : 'N', g.n, g.m, g.k, g.alpha, b, g.ldb, a,
               g.lda, g.beta, c, g.ldc);
  }
  if (bias != nullptr)
    for (int64_t j = 0; j < g.n; ++j)
      for (int64_t i = 0; i < g.m; ++i)
        c[i + j * g.ldc] += bias[i];
}

} // namespace sinter_gemm_detail

extern "C" __attribute__((visibility("default"))) void
sinter_gemm_v1(int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
               int64_t batch, int64_t strideA, int64_t strideB, int64_t strideC, const float *bias,
               int openBlas, int oneThread) {
  if (m == 0 || n == 0 || batch == 0)
    return;
  const sinter_gemm_detail::Call call{transa, transb, m,   n,    k,       alpha,
                                      lda,    ldb,    ldc, beta, openBlas};
  if (batch > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t z = 0; z < batch; ++z)
      sinter_gemm_detail::one(call, a + z * strideA, b + z * strideB, c + z * strideC, bias);
    return;
  }
  if (oneThread)
    sinter_on_one_thread([&] { sinter_gemm_detail::one(call, a, b, c, bias); });
  else
    sinter_gemm_detail::one(call, a, b, c, bias);
}

#endif // SINTER_KERNELS_CPU_GEMM_H
