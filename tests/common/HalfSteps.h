//===- HalfSteps.h - f16 and bf16 steps whose bits are known, for tests ---===//
//
// halfPrecisionStep(dtype) records ops on values of `dtype` (f16 or bf16)
// whose f32 results are each one correctly rounded operation on exactly
// representable values (dyadic values of few bits, integer products), so
// that a compiled kernel that computes in f32 and rounds each op's result
// to the dtype (Note [Half precision in kernels]) gives the reference
// executor's bits exactly: any difference is a rounding missed, made twice
// or made wrong. The ops are fused (a chain of pointwise ops, each rounded),
// reduced (a sum and a maximum, in f32 and rounded once), multiplied (a
// matrix product of small integers, exact in f32 before its rounding),
// converted (to f32, i32 and the other half type), and pushed to the
// dtype's edges (f16's overflow to infinity and its subnormals, NaN from
// sqrt of a negative number). expectSameBits compares two reads of them.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TESTS_COMMON_HALFSTEPS_H
#define SINTER_TESTS_COMMON_HALFSTEPS_H

#include "sinter/Reference.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace sinter::test_support {

inline std::vector<Tensor> halfPrecisionStep(DType half) {
  namespace F = nn::functional;
  // Multiples of 1/64 in [-40, 40]: 13 bits, which the conversion rounds.
  std::vector<float> av, bv, iv, jv;
  for (int k = 0; k < 96; ++k) {
    av.push_back(static_cast<float>((k * 37 % 161) - 80) * 0.25f + (k % 7) / 64.0f);
    bv.push_back(static_cast<float>((k * 11 % 29) - 14) * 0.375f + (k % 3) / 32.0f);
  }
  for (int k = 0; k < 8 * 12; ++k)
    iv.push_back(static_cast<float>((k * 5 % 17) - 8)); // integers in [-8, 8]
  for (int k = 0; k < 12 * 6; ++k)
    jv.push_back(static_cast<float>((k * 7 % 13) - 6));
  Tensor a = from_vector<float>(av, {8, 12}).to(half);
  Tensor b = from_vector<float>(bv, {8, 12}).to(half);
  // Pointwise ops in one kernel, each result rounded to the dtype: a * b
  // needs 16 bits and is rounded before the add, whose sum is rounded again.
  Tensor p = a * b + a;
  Tensor q = F::relu((p - b) * 0.3125) / 3.0;
  // f16's edges: past 65504 is infinity; below 2^-14 the subnormals.
  Tensor huge = p * 1024.0;
  Tensor tiny = p * (1.0 / 16777216.0);
  Tensor root = sqrt(a); // NaN where a < 0
  // A sum (exact in f32: multiples of 1/64 under 2^9) and a maximum.
  Tensor total = a.sum({1});
  Tensor top = p.amax({1});
  // A matrix product of small integers: exact in f32, then rounded.
  Tensor m = matmul(from_vector<float>(iv, {8, 12}).to(half) * 9.0,
                    from_vector<float>(jv, {12, 6}).to(half) * 7.0);
  DType other = half == DType::f16 ? DType::bf16 : DType::f16;
  return {p, q, huge, tiny, root, total, top, m, p.to(DType::f32), q.to(DType::i32), p.to(other)};
}

/// Element k of `got` and `expected` are the same value: the same bits
/// but for NaNs' payloads (a NaN matches a NaN).
inline void expectSameBits(const std::string &what, const std::vector<double> &got,
                           const std::vector<double> &expected) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  int shown = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    bool same = std::isnan(got[k]) ? std::isnan(expected[k])
                                   : std::memcmp(&got[k], &expected[k], sizeof(double)) == 0;
    if (!same && shown++ < 5)
      ADD_FAILURE() << what << " element " << k << ": " << got[k] << ", expected " << expected[k];
  }
}

/// halfPrecisionStep(half) on the reference executor: each result's values.
inline std::vector<std::vector<double>> halfStepOnTheReference(DType half) {
  std::vector<std::vector<double>> values;
  reference::ReferenceGuard oracle;
  for (const Tensor &t : halfPrecisionStep(half))
    values.push_back(t.to_vector<double>());
  return values;
}

/// Each of `results` (halfPrecisionStep's, run) has the bits of `expected`'s.
inline void expectHalfStepBits(const std::vector<Tensor> &results,
                               const std::vector<std::vector<double>> &expected) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t k = 0; k < results.size(); ++k)
    expectSameBits("result " + std::to_string(k), results[k].to_vector<double>(), expected[k]);
}

} // namespace sinter::test_support

#endif // SINTER_TESTS_COMMON_HALFSTEPS_H
