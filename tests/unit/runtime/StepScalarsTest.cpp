//===- StepScalarsTest.cpp - the step scalars' formulas -------------------===//
//
// Note [Step scalars as formulas]: the schedules and formulas by their
// definitions, at the steps where they change shape. That the frontend's
// optimizers pass exactly these numbers is CompiledStep.TheSignatureSaysWhat
// EachArgumentIs (tests/unit/compiler/CompiledStepTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/StepScalars.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sinter::runtime {
namespace {

TEST(StepScalars, SchedulesRampDecayAndHold) {
  Schedule constant{.kind = Schedule::Kind::Constant, .baseLr = 0.01};
  EXPECT_EQ(constant.at(0), 0.01);
  EXPECT_EQ(constant.at(1000000), 0.01);

  Schedule warmup{.kind = Schedule::Kind::LinearWarmup, .baseLr = 0.01, .warmupSteps = 4};
  EXPECT_EQ(warmup.at(0), 0.01 * 1 / 4);
  EXPECT_EQ(warmup.at(2), 0.01 * 3 / 4);
  EXPECT_EQ(warmup.at(3), 0.01);
  EXPECT_EQ(warmup.at(50), 0.01);

  Schedule cosine{.kind = Schedule::Kind::WarmupCosine,
                  .baseLr = 0.01,
                  .warmupSteps = 2,
                  .totalSteps = 12,
                  .minLr = 0.001};
  EXPECT_EQ(cosine.at(0), 0.005);
  EXPECT_DOUBLE_EQ(cosine.at(2), 0.01); // the cosine's top (min + half the span, twice)
  EXPECT_NEAR(cosine.at(7), (0.01 + 0.001) / 2, 1e-15); // halfway down
  EXPECT_LT(cosine.at(11), cosine.at(10));
  EXPECT_GT(cosine.at(11), 0.001);
  EXPECT_EQ(cosine.at(12), 0.001);
  EXPECT_EQ(cosine.at(500), 0.001);
}

TEST(StepScalars, FormulasAreAdamsAndAdamWsNumbers) {
  using Kind = StepScalarFormula::Kind;
  double lr = 0.002;
  EXPECT_EQ((StepScalarFormula{Kind::LearningRate}.at(lr, 7)), lr);
  // At t = 1 the corrections are 1 - beta.
  EXPECT_EQ((StepScalarFormula{Kind::AdamStepSize, 0.9}.at(lr, 1)), lr / (1 - 0.9));
  EXPECT_EQ((StepScalarFormula{Kind::AdamSecondMomentScale, 0.999}.at(lr, 1)), 1 / (1 - 0.999));
  // They fade: at t = 10,000 the step size is lr to within 1e-12.
  EXPECT_NEAR((StepScalarFormula{Kind::AdamStepSize, 0.9}.at(lr, 10000)), lr, 1e-12);
  EXPECT_EQ((StepScalarFormula{Kind::AdamSecondMomentScale, 0.999}.at(lr, 3)),
            1 / (1 - std::pow(0.999, 3.0)));
  EXPECT_EQ((StepScalarFormula{Kind::DecoupledWeightDecay, 0.01}.at(lr, 3)), 1 - lr * 0.01);
  EXPECT_STREQ(nameOf(Kind::AdamSecondMomentScale), "adam_second_moment_scale");
  EXPECT_STREQ(nameOf(Kind::DecoupledWeightDecay), "decoupled_weight_decay");
}

} // namespace
} // namespace sinter::runtime
