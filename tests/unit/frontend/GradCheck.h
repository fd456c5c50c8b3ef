//===- GradCheck.h - finite-difference gradient checks --------------------===//
//
// gradcheck(f, inputs) compares the gradients autograd computes for f with
// central finite differences, in double precision on the reference executor
// (PyTorch's gradcheck does the same in float64). It prints a line a human
// can read as proof ("GRAD OK  max diff 3.1e-10 (0.1% of tolerance)").
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TESTS_UNIT_FRONTEND_GRADCHECK_H
#define SINTER_TESTS_UNIT_FRONTEND_GRADCHECK_H

#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace sinter::testing {

struct Input {
  std::vector<double> values;
  Shape shape;
};

/// Deterministic, irregular values in [-1, 1] (no ties, no zeros).
inline std::vector<double> sampleValues(int64_t count, int salt = 0) {
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(std::sin(1.3 * static_cast<double>(i + 1) + 0.7 * salt) * 0.9 +
                     0.05 * ((i + salt) % 3));
  return values;
}

inline Input sample(const Shape &shape, int salt = 0) {
  return {sampleValues(numel(shape), salt), shape};
}

/// The message of the sinter::Error that `f` throws, or "no error".
template <typename Fn> std::string errorOf(Fn f) {
  try {
    f();
  } catch (const Error &error) {
    return error.what();
  }
  return "no error";
}

/// Checks d(sum(w * f(inputs)))/d(input) against finite differences, with
/// fixed weights w so that every output element matters differently.
inline void gradcheck(const std::string &what,
                      const std::function<Tensor(const std::vector<Tensor> &)> &f,
                      const std::vector<Input> &inputs, double eps = 1e-6, double tol = 1e-6) {
  reference::HighPrecisionGuard precise;
  auto makeLeaves = [&](int which, int64_t element, double delta) {
    std::vector<Tensor> leaves;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<double> values = inputs[i].values;
      if (static_cast<int>(i) == which)
        values[element] += delta;
      leaves.push_back(from_vector(values, inputs[i].shape));
    }
    return leaves;
  };
  auto weightsFor = [](const Tensor &out) {
    return from_vector(sampleValues(out.numel(), 7), out.shape());
  };
  auto lossOf = [&](const std::vector<Tensor> &leaves) {
    Tensor out = f(leaves);
    return (out * weightsFor(out)).sum();
  };

  std::vector<Tensor> leaves = makeLeaves(-1, 0, 0);
  for (Tensor &leaf : leaves)
    leaf.requires_grad_();
  lossOf(leaves).backward();

  double worst = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(leaves[i].grad().defined()) << what << ": input #" << i << " got no gradient";
    ASSERT_EQ(leaves[i].grad().shape(), inputs[i].shape) << what;
    std::vector<double> analytic = leaves[i].grad().to_vector<double>();
    for (int64_t j = 0; j < static_cast<int64_t>(inputs[i].values.size()); ++j) {
      NoGradGuard noGrad;
      double plus = lossOf(makeLeaves(static_cast<int>(i), j, eps)).item<double>();
      double minus = lossOf(makeLeaves(static_cast<int>(i), j, -eps)).item<double>();
      double numeric = (plus - minus) / (2 * eps);
      double allowed = tol * std::max(1.0, std::fabs(numeric));
      double diff = std::fabs(analytic[j] - numeric);
      worst = std::max(worst, diff / allowed);
      EXPECT_LE(diff, allowed) << what << ": input #" << i << " element " << j << ": autograd "
                               << analytic[j] << ", finite differences " << numeric;
    }
  }
  std::printf("GRAD %s  %-28s max diff %.1f%% of tolerance\n", worst <= 1 ? "OK  " : "FAIL",
              what.c_str(), 100 * worst);
}

} // namespace sinter::testing

#endif // SINTER_TESTS_UNIT_FRONTEND_GRADCHECK_H
