//===- sgemm.h - one row-major product inside a kernel, on the host -------===//
//
// What a kernel's own products call (the convolutions', kernels/cpu/conv2d.h),
// and the one-thread guard that the Program's products (cpu/gemm.h) share.
// Included by every kernel library through kernel.h; it defines nothing
// exported, so any translation unit may include it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_SGEMM_H
#define SINTER_KERNELS_CPU_SGEMM_H

#include <cblas.h>
#include <cstdint>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

// Runs a small library call on the calling thread (Note [Small products on
// one thread] in CpuLibrary.cpp): waking OpenMP's sleeping threads would
// take longer than the call.
template <typename F> static inline void sinter_on_one_thread(F call) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  call();
  omp_set_num_threads(threads);
}

// One row-major C = op(A) op(B) + beta C (alpha 1) inside a kernel (the
// convolutions' products): by OpenBLAS or oneDNN, on the calling thread only
// when `oneThread` (the compiler's choices, constants of the kernel).
static inline void sinter_sgemm_row_major(bool openBlas, bool oneThread, bool transa, bool transb,
                                          int64_t m, int64_t n, int64_t k, const float *a,
                                          int64_t lda, const float *b, int64_t ldb, float beta,
                                          float *c, int64_t ldc) {
  auto call = [&] {
    if (openBlas)
      cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans,
                  transb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
                  static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a,
                  static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                  static_cast<blasint>(ldc));
    else
      dnnl_sgemm(transa ? 'T' : 'N', transb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c,
                 ldc);
  };
  if (oneThread)
    sinter_on_one_thread(call);
  else
    call();
}

#endif // SINTER_KERNELS_CPU_SGEMM_H
