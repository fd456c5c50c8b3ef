//===- Gemm.cpp - matrix products on the host, from their descriptors ----===//
#include "sinter/runtime/Gemm.h"

#include "absl/strings/str_cat.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>

namespace sinter::runtime {

Gemm gemmOfRowMajor(bool transposeX, bool transposeW, int64_t M, int64_t N, int64_t K,
                    int64_t batch, bool sharedRight) {
  Gemm gemm;
  gemm.transa = transposeW;
  gemm.transb = transposeX;
  gemm.m = N;
  gemm.n = M;
  gemm.k = K;
  // Each leading dimension is the matrix's row length (at least 1, as BLAS
  // asks even of empty matrices).
  gemm.lda = std::max<int64_t>(1, transposeW ? K : N);
  gemm.ldb = std::max<int64_t>(1, transposeX ? M : K);
  gemm.ldc = std::max<int64_t>(1, N);
  gemm.batch = batch;
  if (batch > 1) { // strides of one matrix say nothing: left 0
    gemm.strideA = sharedRight ? 0 : K * N;
    gemm.strideB = M * K;
    gemm.strideC = M * N;
  }
  return gemm;
}

std::string describe(const Gemm &gemm) {
  return absl::StrCat("gemm ", gemm.transa ? "T" : "N", ",", gemm.transb ? "T" : "N",
                      " m=", gemm.m, " n=", gemm.n, " k=", gemm.k, " lda=", gemm.lda,
                      " ldb=", gemm.ldb, " ldc=", gemm.ldc, " batch=", gemm.batch,
                      " strides=", gemm.strideA, ",", gemm.strideB, ",", gemm.strideC,
                      " alpha=", gemm.alpha, " beta=", gemm.beta,
                      gemm.epilogue == Gemm::Epilogue::Bias ? " epilogue=bias" : "");
}

Status checkGemm(const Gemm &gemm) {
  if (gemm.m < 0 || gemm.n < 0 || gemm.k < 0 || gemm.batch < 0)
    return absl::InvalidArgumentError(absl::StrCat("a negative size in ", describe(gemm)));
  if (gemm.strideA < 0 || gemm.strideB < 0 || gemm.strideC < 0)
    return absl::InvalidArgumentError(absl::StrCat("a negative stride in ", describe(gemm)));
  auto check = [&](const char *name, int64_t ld, int64_t rows) -> Status {
    if (ld < std::max<int64_t>(1, rows))
      return absl::InvalidArgumentError(absl::StrCat(name, " is ", ld, ", less than the ", rows,
                                                     " rows it must hold, in ", describe(gemm)));
    return absl::OkStatus();
  };
  SINTER_RETURN_IF_ERROR(check("lda", gemm.lda, gemm.transa ? gemm.k : gemm.m));
  SINTER_RETURN_IF_ERROR(check("ldb", gemm.ldb, gemm.transb ? gemm.n : gemm.k));
  SINTER_RETURN_IF_ERROR(check("ldc", gemm.ldc, gemm.m));
  if (gemm.batch > 1 && gemm.strideC < gemm.ldc * gemm.n)
    return absl::InvalidArgumentError(
        absl::StrCat("the batch's results overlap (strideC ", gemm.strideC, " < ldc * n = ",
                     gemm.ldc * gemm.n, ") in ", describe(gemm)));
  return absl::OkStatus();
}

namespace {

/// One product of the batch, by the chosen library, on the threads it has.
void multiply(const Gemm &gemm, bool openBlas, const float *a, const float *b, float *c) {
  if (openBlas) {
    cblas_sgemm(CblasColMajor, gemm.transa ? CblasTrans : CblasNoTrans,
                gemm.transb ? CblasTrans : CblasNoTrans, static_cast<blasint>(gemm.m),
                static_cast<blasint>(gemm.n), static_cast<blasint>(gemm.k), gemm.alpha, a,
                static_cast<blasint>(gemm.lda), b, static_cast<blasint>(gemm.ldb), gemm.beta, c,
                static_cast<blasint>(gemm.ldc));
    return;
  }
  // oneDNN's sgemm is row-major: a column-major matrix is the row-major
  // transpose of itself, so the column-major product C = op(A) op(B) is the
  // row-major Cᵀ = op(B)ᵀ op(A)ᵀ: B first, each with its own flag.
  dnnl_sgemm(gemm.transb ? 'T' : 'N', gemm.transa ? 'T' : 'N', gemm.n, gemm.m, gemm.k, gemm.alpha,
             b, gemm.ldb, a, gemm.lda, gemm.beta, c, gemm.ldc);
}

/// C = beta C, without reading C when beta is 0 (BLAS's rule).
void scale(const Gemm &gemm, float *c) {
  for (int64_t j = 0; j < gemm.n; ++j)
    for (int64_t i = 0; i < gemm.m; ++i) {
      float &x = c[i + j * gemm.ldc];
      x = gemm.beta == 0 ? 0.0f : gemm.beta * x;
    }
}

void addBias(const Gemm &gemm, const float *bias, float *c) {
  for (int64_t j = 0; j < gemm.n; ++j)
    for (int64_t i = 0; i < gemm.m; ++i)
      c[i + j * gemm.ldc] += bias[i];
}

} // namespace

void runGemmOnHost(const Gemm &gemm, HostGemmChoice choice, const float *a, const float *b,
                   float *c, const float *bias) {
  if (gemm.m == 0 || gemm.n == 0 || gemm.batch == 0)
    return;
  auto one = [&](int64_t z) {
    const float *az = a + z * gemm.strideA, *bz = b + z * gemm.strideB;
    float *cz = c + z * gemm.strideC;
    if (gemm.k == 0)
      scale(gemm, cz);
    else
      multiply(gemm, choice.openBlas, az, bz, cz);
    if (gemm.epilogue == Gemm::Epilogue::Bias)
      addBias(gemm, bias, cz);
  };
  if (gemm.batch > 1) {
    // The matrices of a batch on all threads, each product on one (neither
    // library nests parallel regions).
#pragma omp parallel for schedule(static)
    for (int64_t z = 0; z < gemm.batch; ++z)
      one(z);
    return;
  }
  // One product: no parallel region around it, not even an inactive one
  // (inside one, the library's own region is nested, and libgomp starts new
  // threads for it instead of waking its pool's).
  if (!choice.oneThread) {
    one(0);
    return;
  }
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  one(0);
  omp_set_num_threads(threads);
}

} // namespace sinter::runtime
