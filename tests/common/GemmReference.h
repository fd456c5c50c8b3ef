//===- GemmReference.h - a matrix product by its definition, for tests ---===//
//
// The product a GEMM descriptor describes (Note [Matrix products as data] in
// sinter/runtime/Gemm.h), computed by its definition, column-major, in
// double: what the host's and cuBLAS's products are checked against.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TESTS_COMMON_GEMMREFERENCE_H
#define SINTER_TESTS_COMMON_GEMMREFERENCE_H

#include "sinter/runtime/Gemm.h"

#include <cstdint>
#include <vector>

namespace sinter::test_support {

/// C = alpha op(A) op(B) + beta C (+ bias[i] on row i), each matrix of the
/// batch at its stride; beta 0 ignores C's old values (NaN included).
inline std::vector<float> gemmReference(const runtime::Gemm &g, const std::vector<float> &a,
                                        const std::vector<float> &b, std::vector<float> c,
                                        const std::vector<float> &bias) {
  for (int64_t z = 0; z < g.batch; ++z)
    for (int64_t j = 0; j < g.n; ++j)
      for (int64_t i = 0; i < g.m; ++i) {
        double sum = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          double x = g.transa ? a[z * g.strideA + p + i * g.lda] : a[z * g.strideA + i + p * g.lda];
          double y = g.transb ? b[z * g.strideB + j + p * g.ldb] : b[z * g.strideB + p + j * g.ldb];
          sum += x * y;
        }
        float &out = c[z * g.strideC + i + j * g.ldc];
        double value = g.alpha * sum + (g.beta == 0 ? 0.0 : g.beta * double(out));
        if (g.epilogue == runtime::Gemm::Epilogue::Bias)
          value += bias[i];
        out = static_cast<float>(value);
      }
  return c;
}

} // namespace sinter::test_support

#endif // SINTER_TESTS_COMMON_GEMMREFERENCE_H
