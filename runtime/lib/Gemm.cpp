//===- Gemm.cpp - matrix products on the host, from their descriptors ----===//
#include "sinter/runtime/Gemm.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"

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
  return absl::StrCat("gemm ", gemm.transa ? "T" : "N", ",", gemm.transb ? "T" : "N", " m=", gemm.m,
                      " n=", gemm.n, " k=", gemm.k, " lda=", gemm.lda, " ldb=", gemm.ldb,
                      " ldc=", gemm.ldc, " batch=", gemm.batch, " strides=", gemm.strideA, ",",
                      gemm.strideB, ",", gemm.strideC, " alpha=", gemm.alpha, " beta=", gemm.beta,
                      gemm.epilogue == Gemm::Epilogue::Bias ? " epilogue=bias" : "",
                      gemm.tf32 ? " tf32" : "");
}

Status checkGemm(const Gemm &gemm) {
  if (gemm.m < 0 || gemm.n < 0 || gemm.k < 0 || gemm.batch < 0)
    return absl::InvalidArgumentError(absl::StrCat("a negative size in ", describe(gemm)));
  if (gemm.strideA < 0 || gemm.strideB < 0 || gemm.strideC < 0)
    return absl::InvalidArgumentError(absl::StrCat("a negative stride in ", describe(gemm)));
  // BLAS takes 32-bit sizes; larger ones would also overflow the checks below.
  constexpr int64_t kLargest = std::numeric_limits<int32_t>::max();
  for (int64_t size : {gemm.m, gemm.n, gemm.k, gemm.lda, gemm.ldb, gemm.ldc, gemm.batch,
                       gemm.strideA, gemm.strideB, gemm.strideC})
    if (size > kLargest)
      return absl::InvalidArgumentError(
          absl::StrCat("a size or stride over 2^31 - 1 in ", describe(gemm)));
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
    return absl::InvalidArgumentError(absl::StrCat("the batch's results overlap (strideC ",
                                                   gemm.strideC, " < ldc * n = ", gemm.ldc * gemm.n,
                                                   ") in ", describe(gemm)));
  return absl::OkStatus();
}

void runGemmOnHost(HostGemm run, const Gemm &gemm, HostGemmChoice choice, const float *a,
                   const float *b, float *c, const float *bias) {
  run(gemm.transa, gemm.transb, gemm.m, gemm.n, gemm.k, gemm.alpha, a, gemm.lda, b, gemm.ldb,
      gemm.beta, c, gemm.ldc, gemm.batch, gemm.strideA, gemm.strideB, gemm.strideC,
      gemm.epilogue == Gemm::Epilogue::Bias ? bias : nullptr, choice.openBlas, choice.oneThread);
}

} // namespace sinter::runtime
