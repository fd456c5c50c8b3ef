//===- StepScalars.h - what an optimizer computes each step, as formulas -*- C++ -*-===//
//
// Note [Step scalars as formulas]
// An optimizer step multiplies by a few numbers that change every step: the
// learning rate a schedule gives, Adam's bias corrections, AdamW's decay
// factor. They are not constants of the compiled step (it would be compiled
// again every step) but data, computed on the host and passed in as scalar
// arguments (role step_scalar in the Program's signature). Each is one of
// the named formulas below, of the learning rate at this step and the
// optimizer's step count t (1 at the first step); the learning rate is a
// Schedule's, of the number of scheduler steps taken (0 before the first).
// The frontend's optimizers and schedulers compute their numbers with these
// functions and record each scalar's formula on its data node, which the
// Program's signature carries (Program::Value::formula), so that a runtime
// with no frontend (an ahead-of-time artifact) computes the same doubles
// from the step count alone:
//
//   learning_rate              lr
//   adam_step_size             lr / (1 - beta1^t)         (parameter: beta1)
//   adam_second_moment_scale   1 / (1 - beta2^t)          (parameter: beta2)
//   decoupled_weight_decay     1 - lr * weight_decay      (parameter: weight_decay)
//
// Each is written once, here, in the order of operations the frontend has
// always used, so that the bits are the same. Plain C++ and <cmath>: the
// header needs nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_STEPSCALARS_H
#define SINTER_RUNTIME_STEPSCALARS_H

#include <cmath>
#include <cstdint>
#include <numbers>

namespace sinter::runtime {

/// 1 - beta^t: how far Adam's moment estimates, started at zero, are from
/// unbiased after t steps.
inline double adamBiasCorrection(double beta, int64_t t) {
  return 1 - std::pow(beta, static_cast<double>(t));
}

/// A learning-rate schedule (sinter::optim's LRScheduler and its kinds).
struct Schedule {
  enum class Kind : uint8_t {
    /// base_lr at every step.
    Constant,
    /// base_lr * (step + 1) / warmup_steps for the first warmup_steps
    /// steps, then base_lr.
    LinearWarmup,
    /// LinearWarmup's ramp, then a cosine from base_lr down to min_lr at
    /// total_steps, and min_lr after.
    WarmupCosine,
  };
  Kind kind = Kind::Constant;
  double baseLr = 0;
  int64_t warmupSteps = 0;
  int64_t totalSteps = 0;
  double minLr = 0;

  /// The learning rate after `step` scheduler steps.
  double at(int64_t step) const {
    switch (kind) {
    case Kind::Constant:
      return baseLr;
    case Kind::LinearWarmup:
      if (step >= warmupSteps)
        return baseLr;
      return baseLr * static_cast<double>(step + 1) / static_cast<double>(warmupSteps);
    case Kind::WarmupCosine: {
      if (step < warmupSteps)
        return baseLr * static_cast<double>(step + 1) / static_cast<double>(warmupSteps);
      if (step >= totalSteps)
        return minLr;
      double progress = static_cast<double>(step - warmupSteps) /
                        static_cast<double>(totalSteps - warmupSteps);
      return minLr + 0.5 * (baseLr - minLr) * (1 + std::cos(std::numbers::pi * progress));
    }
    }
    return baseLr;
  }
  friend bool operator==(const Schedule &, const Schedule &) = default;
};

/// Which number a step scalar is (Note [Step scalars as formulas]).
struct StepScalarFormula {
  enum class Kind : uint8_t {
    LearningRate,
    AdamStepSize,
    AdamSecondMomentScale,
    DecoupledWeightDecay,
  };
  Kind kind = Kind::LearningRate;
  /// beta1, beta2 or the weight decay; 0 for the learning rate.
  double parameter = 0;

  /// The scalar at optimizer step `t` (1 at the first) with learning rate
  /// `lr`.
  double at(double lr, int64_t t) const {
    switch (kind) {
    case Kind::LearningRate:
      return lr;
    case Kind::AdamStepSize:
      return lr / adamBiasCorrection(parameter, t);
    case Kind::AdamSecondMomentScale:
      return 1 / adamBiasCorrection(parameter, t);
    case Kind::DecoupledWeightDecay:
      return 1 - lr * parameter;
    }
    return lr;
  }
  friend bool operator==(const StepScalarFormula &, const StepScalarFormula &) = default;
};

/// The formula's name in files and messages: "learning_rate",
/// "adam_step_size", "adam_second_moment_scale", "decoupled_weight_decay".
inline const char *nameOf(StepScalarFormula::Kind kind) {
  switch (kind) {
  case StepScalarFormula::Kind::LearningRate:
    return "learning_rate";
  case StepScalarFormula::Kind::AdamStepSize:
    return "adam_step_size";
  case StepScalarFormula::Kind::AdamSecondMomentScale:
    return "adam_second_moment_scale";
  case StepScalarFormula::Kind::DecoupledWeightDecay:
    return "decoupled_weight_decay";
  }
  return "unknown";
}

/// Note [Random keys across steps]
/// A random op reads its Philox key as data: kernels::randomKey(seed,
/// stream), each random call of the frontend taking the next stream of the
/// global generator (sinter/Tensor.h, manual_seed). A training step draws
/// the same number of streams every step, so the key of a step's j-th
/// random op at step count n is that of step `atStep` moved on by
/// (n - atStep) * streamsPerStep streams: what a runtime with no frontend
/// computes to draw the masks the just-in-time path draws. The frontend
/// records the seed and stream on each key's data node; whoever exports a
/// step measures streamsPerStep (the streams the step took) and atStep.
struct RandomKeyStream {
  uint64_t seed = 0;
  /// The stream at step count `atStep`.
  uint64_t stream = 0;
  uint64_t streamsPerStep = 0;
  int64_t atStep = 0;
  /// The stream at step count `step` (unsigned arithmetic: before atStep
  /// too).
  uint64_t streamAt(int64_t step) const {
    return stream + static_cast<uint64_t>(step - atStep) * streamsPerStep;
  }
  friend bool operator==(const RandomKeyStream &, const RandomKeyStream &) = default;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_STEPSCALARS_H
