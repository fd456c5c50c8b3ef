//===- ZooTraining.h - three training steps of a zoo model, compared -------===//
//
// What the zoo tests (ZooStepsTest.cpp: compiled and eager against the
// reference executor) and the CUDA session tests (CudaStepTest.cpp: cuda:0
// on the simulator against the CPU) share: three steps of SGD with momentum
// from the same weights and batch, and the comparison of two such runs.
//
// The optimizer is SGD with momentum: Adam divides each gradient by its own
// magnitude, so where a gradient is as small as rounding noise its step of
// +-lr points anywhere and parameters cannot be compared elementwise. The
// change p3 - p0 is compared, not p3: a layer norm's weight starts at 1 and
// moves by ~0.3 in three steps, so within 1e-3 of max|p3| a wrong gradient
// of its own size would pass; within 1e-3 of the largest change it cannot.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TESTS_ZOOTRAINING_H
#define SINTER_TESTS_ZOOTRAINING_H

#include "ZooTask.h"

#include "sinter/Compare.h"
#include "sinter/Compiler/StepCompiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace sinter::zoo {

struct ZooRun {
  std::vector<double> losses;
  /// Per parameter: its name, its values before the first step and after
  /// the third.
  struct Parameter {
    std::string name;
    std::vector<double> before, after;
  };
  std::vector<Parameter> parameters;
};

/// Three steps of `model` in a session of `settings` (metrics reset first,
/// so the caller can read the run's).
inline ZooRun trainThreeSteps(const std::string &model, const Settings &settings, int64_t batch,
                              int64_t length, int64_t image = 32) {
  compiler::install();
  Session::Use session(settings);
  reset_metrics();
  tools::ZooTask task = tools::makeZooTask(model, batch, length, /*seed=*/3, image);
  EXPECT_EQ(task.inputs.device(), settings.device);
  optim::SGD optimizer(task.model->parameters(), {.lr = 0.05, .momentum = 0.9});
  ZooRun run;
  for (const auto &[name, p] : task.model->named_parameters())
    run.parameters.push_back({name, p.to_vector<double>(), {}});
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    Tensor loss = task.loss();
    loss.backward();
    optimizer.step();
    mark_step();
    run.losses.push_back(loss.item<double>());
  }
  size_t i = 0;
  for (const auto &[name, p] : task.model->named_parameters())
    run.parameters[i++].after = p.to_vector<double>();
  return run;
}

/// p3 - p0 of one parameter.
inline std::vector<double> change(const ZooRun::Parameter &p) {
  std::vector<double> moved(p.after.size());
  for (size_t k = 0; k < moved.size(); ++k)
    moved[k] = p.after[k] - p.before[k];
  return moved;
}

/// Expects `run` to train as `reference` did, and prints how close it came.
/// Float rounding in another order moves the losses by far less than 1e-4
/// of their size, and the parameters' changes by far less than 1e-3 of the
/// largest change, plus a few f32 ulps of the parameter itself (p3 and p0
/// are each rounded to f32: a parameter whose gradient is exactly zero, as
/// attention's key bias, moves by rounding noise). The initial values are
/// the same draws computed by other kernels (glibc's vector and scalar log
/// and cos may differ in the last bit): within 1e-6.
inline void expectSameTraining(const std::string &what, const ZooRun &run,
                               const ZooRun &reference) {
  Comparison losses = compare_values(what + " losses", run.losses, reference.losses,
                                     {.of_largest = 1e-4, .absolute = 1e-6});
  EXPECT_TRUE(losses.ok) << losses.message;
  ASSERT_EQ(run.parameters.size(), reference.parameters.size());
  double closest = 0;
  std::string closestName;
  for (size_t i = 0; i < run.parameters.size(); ++i) {
    const ZooRun::Parameter &p = run.parameters[i], &want = reference.parameters[i];
    ASSERT_EQ(p.name, want.name);
    Comparison start = compare_values(what + " " + p.name + " before the steps", p.before,
                                      want.before, {.of_largest = 1e-6});
    ASSERT_TRUE(start.ok) << start.message;
    double size = 0;
    for (double v : want.before)
      size = std::max(size, std::fabs(v));
    Comparison moved = compare_values(what + " change of " + p.name, change(p), change(want),
                                      {.of_largest = 1e-3, .absolute = 5e-7 * size});
    EXPECT_TRUE(moved.ok) << moved.message;
    if (moved.worst_fraction > closest)
      closest = moved.worst_fraction, closestName = p.name;
  }
  std::printf("ZOO OK  %-22s parameter changes within tolerance (closest: %s at %.0f%% of it)\n",
              what.c_str(), closestName.c_str(), 100 * closest);
  std::printf("ZOO OK  %-22s losses %.6f %.6f %.6f (reference %.6f %.6f %.6f)\n", what.c_str(),
              run.losses[0], run.losses[1], run.losses[2], reference.losses[0], reference.losses[1],
              reference.losses[2]);
}

} // namespace sinter::zoo

#endif // SINTER_TESTS_ZOOTRAINING_H
