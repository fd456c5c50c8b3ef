//===- CompareTest.cpp - the one comparison with a reference -----------------===//
#include "sinter/Compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace sinter {
namespace {

using ::testing::HasSubstr;

const Tolerance kTight = {.of_largest = 1e-5, .absolute = 1e-7};

TEST(Compare, AnAllNanResultFails) {
  // std::max(worst, fabs(NaN - w)) keeps `worst`: the comparison this
  // replaces let an all-NaN result through.
  std::vector<double> want = {0.5, -1.0, 2.0}, got(3, NAN);
  Comparison c = compare_values("gradient of w", got, want, kTight);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.failures, 3u);
  EXPECT_EQ(c.first_failure, 0u);
  EXPECT_THAT(c.message,
              HasSubstr("gradient of w: element 0 of 3 is nan where the reference is 0.5"));
}

TEST(Compare, AnInfinityWhereTheReferenceIsFiniteFails) {
  std::vector<float> want = {1, 2, 3, 4}, got = {1, 2, INFINITY, 4};
  Comparison c = compare_values("loss", got, want, kTight);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.first_failure, 2u);
  EXPECT_EQ(c.got_at_failure, INFINITY);
  EXPECT_THAT(c.message, HasSubstr("element 2 of 4 is inf where the reference is 3"));
}

TEST(Compare, NonFiniteReferencesMustBeMatchedExactly) {
  double inf = std::numeric_limits<double>::infinity();
  std::vector<double> want = {NAN, inf, -inf, 1.0};
  EXPECT_TRUE(compare_values("x", std::vector<double>{NAN, inf, -inf, 1.0}, want, kTight).ok);
  EXPECT_FALSE(compare_values("x", std::vector<double>{0.0, inf, -inf, 1.0}, want, kTight).ok);
  EXPECT_FALSE(compare_values("x", std::vector<double>{NAN, -inf, -inf, 1.0}, want, kTight).ok);
  EXPECT_FALSE(compare_values("x", std::vector<double>{NAN, inf, NAN, 1.0}, want, kTight).ok);
  // The largest magnitude is the largest finite one: 1, not infinity.
  EXPECT_EQ(compare_values("x", want, want, kTight).largest, 1.0);
}

TEST(Compare, TheToleranceHasThreeParts) {
  std::vector<double> want = {100.0, 1.0, 0.0};
  // 1e-3 of the largest (100) allows 0.1 everywhere.
  EXPECT_TRUE(
      compare_values("x", std::vector<double>{100.05, 1.09, 0.09}, want, {.of_largest = 1e-3}).ok);
  Comparison out =
      compare_values("x", std::vector<double>{100.0, 1.2, 0.0}, want, {.of_largest = 1e-3});
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.first_failure, 1u);
  // 1e-2 of each element allows 1 at the first, 0.01 at the second, 0 at the third.
  EXPECT_TRUE(
      compare_values("x", std::vector<double>{100.9, 1.009, 0.0}, want, {.of_element = 1e-2}).ok);
  EXPECT_FALSE(
      compare_values("x", std::vector<double>{100.0, 1.0, 1e-9}, want, {.of_element = 1e-2}).ok);
  EXPECT_TRUE(compare_values("x", std::vector<double>{100.0, 1.0, 1e-9}, want,
                             {.of_element = 1e-2, .absolute = 1e-8})
                  .ok);
}

/// Every tolerance the suite compares with (the random graphs, the zoo
/// steps, the kernels, the CUDA steps, sinter-bench's check; the loosest is
/// 1e-3 of the largest element) fails a 1% change of one element of median
/// magnitude in a tensor of normal values, also beside an infinity, and
/// passes the same tensor rounded to f32. (tests/golden/test_closeness.py does
/// the same for the comparisons with PyTorch.)
TEST(Compare, EveryToleranceOfTheSuiteFailsAOnePercentChangeOfOneElement) {
  const Tolerance suite[] = {{.of_largest = 1e-4, .absolute = 1e-6},
                             {.of_largest = 1e-5, .absolute = 1e-6},
                             {.of_largest = 1e-5, .absolute = 1e-7},
                             {.of_largest = 1e-4, .absolute = 1e-7},
                             {.of_largest = 1e-6},
                             {.of_largest = 1e-5},
                             {.of_largest = 1e-3, .absolute = 1e-6},
                             {.of_largest = 1e-3, .absolute = 5e-7}};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::vector<double> want(4096);
  for (double &w : want)
    w = normal(rng);
  want[10] = std::numeric_limits<double>::infinity();
  std::vector<size_t> order(want.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return std::fabs(want[a]) < std::fabs(want[b]); });
  const size_t median = order[order.size() / 2];
  std::vector<double> rounded(want.size());
  for (size_t k = 0; k < want.size(); ++k)
    rounded[k] = static_cast<float>(want[k]);
  std::vector<double> changed = want;
  changed[median] *= 1.01;
  for (const Tolerance &tolerance : suite) {
    SCOPED_TRACE(::testing::Message()
                 << "of_largest " << tolerance.of_largest << ", absolute " << tolerance.absolute);
    Comparison same = compare_values("x", rounded, want, tolerance);
    EXPECT_TRUE(same.ok) << same.message;
    Comparison off = compare_values("x", changed, want, tolerance);
    EXPECT_FALSE(off.ok) << off.message;
    EXPECT_EQ(off.first_failure, median);
    EXPECT_EQ(off.failures, 1u);
  }
}

TEST(Compare, ReportsHowCloseAPassIs) {
  std::vector<double> want = {2.0, -4.0}, got = {2.0, -4.0001};
  Comparison c = compare_values("weight", got, want, {.of_largest = 1e-4});
  ASSERT_TRUE(c.ok) << c.message;
  EXPECT_NEAR(c.worst_difference, 1e-4, 1e-12);
  EXPECT_NEAR(c.worst_fraction, 0.25, 1e-6);
  EXPECT_THAT(c.message, HasSubstr("TENSOR OK  weight  max diff 1.00e-04  (25.0% of tolerance)"));
}

TEST(Compare, SizesMustAgree) {
  Comparison c =
      compare_values("x", std::vector<double>{1, 2}, std::vector<double>{1, 2, 3}, kTight);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.message, HasSubstr("x: 2 elements where the reference has 3"));
}

} // namespace
} // namespace sinter
