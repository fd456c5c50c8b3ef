//===- ZooStepsTest.cpp - every zoo model trained three ways ---------------===//
//
// Three training steps of each zoo model from the same weights and batch,
// run on the reference executor, eagerly (one program per op) and compiled
// (one fused program per step): the losses of every step, and how far every
// parameter moved in the three steps, must agree. The optimizer is SGD with
// momentum: Adam divides each gradient by its own magnitude, so where a
// gradient is as small as rounding noise its step of +-lr points anywhere
// and parameters cannot be compared elementwise (Adam's update kernel is
// checked on its own in CpuKernelTest, and in every compiled test step).
//
// The change p3 - p0 is compared, not p3: a layer norm's weight starts at 1
// and moves by ~0.3 in three steps, so within 1e-3 of max|p3| a wrong
// gradient of its own size would pass; within 1e-3 of the largest change
// it cannot.
//
//===----------------------------------------------------------------------===//
#include "ZooTask.h"

#include "sinter/Compare.h"
#include "sinter/Compiler/StepCompiler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace {

using namespace sinter;

struct Run {
  std::vector<double> losses;
  /// Per parameter: its name, its values before the first step and after
  /// the third.
  struct Parameter {
    std::string name;
    std::vector<double> before, after;
  };
  std::vector<Parameter> parameters;
};

Run train(const std::string &model, CompilerConfig config, int64_t batch, int64_t length,
          int64_t image) {
  compiler::install();
  Session::Use session({.compiler = config});
  reset_metrics();
  tools::ZooTask task = tools::makeZooTask(model, batch, length, /*seed=*/3, image);
  optim::SGD optimizer(task.model->parameters(), {.lr = 0.05, .momentum = 0.9});
  Run run;
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
  Metrics m = metrics();
  int64_t expected = config.use_reference ? 0 : m.steps;
  // The parameters' initialization (makeZooTask's step) and three training steps.
  EXPECT_EQ(m.steps, 4) << metrics_report();
  EXPECT_EQ(config.enabled ? m.compiled_steps : m.eager_steps, expected) << metrics_report();
  EXPECT_EQ(m.fallbacks, 0) << metrics_report();
  // The first step creates the momentum buffers, the second and third have
  // one structure: the third runs the second's executable.
  EXPECT_GE(m.repeated_graphs, 1) << metrics_report();
  if (config.enabled && !config.use_reference) {
    EXPECT_EQ(m.compilations, m.distinct_graphs) << metrics_report();
  }
  return run;
}

/// p3 - p0 of one parameter.
std::vector<double> change(const Run::Parameter &p) {
  std::vector<double> moved(p.after.size());
  for (size_t k = 0; k < moved.size(); ++k)
    moved[k] = p.after[k] - p.before[k];
  return moved;
}

void checkModel(const std::string &model, int64_t batch, int64_t length = 8, int64_t image = 32) {
  Run reference = train(model, {.use_reference = true}, batch, length, image);
  for (bool compiled : {false, true}) {
    const char *mode = compiled ? "compiled" : "eager";
    Run run = train(model, {.enabled = compiled}, batch, length, image);
    // Float rounding in another order moves the losses by far less than
    // 1e-4 of their size, and the parameters' changes by far less than 1e-3
    // of the largest change, plus a few f32 ulps of the parameter itself
    // (p3 and p0 are each rounded to f32: a parameter whose gradient is
    // exactly zero, as attention's key bias, moves by rounding noise).
    Comparison losses = compare_values(model + " " + mode + " losses", run.losses, reference.losses,
                                       {.of_largest = 1e-4, .absolute = 1e-6});
    EXPECT_TRUE(losses.ok) << losses.message;
    ASSERT_EQ(run.parameters.size(), reference.parameters.size());
    double closest = 0;
    std::string closestName;
    for (size_t i = 0; i < run.parameters.size(); ++i) {
      const Run::Parameter &p = run.parameters[i], &want = reference.parameters[i];
      ASSERT_EQ(p.name, want.name);
      // The initial values are the same draws, computed in another order
      // (glibc's vector and scalar log and cos may differ in the last bit).
      Comparison start = compare_values(model + " " + mode + " " + p.name + " before the steps",
                                        p.before, want.before, {.of_largest = 1e-6});
      ASSERT_TRUE(start.ok) << start.message;
      double size = 0;
      for (double v : want.before)
        size = std::max(size, std::fabs(v));
      Comparison moved =
          compare_values(model + " " + mode + " change of " + p.name, change(p), change(want),
                         {.of_largest = 1e-3, .absolute = 5e-7 * size});
      EXPECT_TRUE(moved.ok) << moved.message;
      if (moved.worst_fraction > closest)
        closest = moved.worst_fraction, closestName = p.name;
    }
    std::printf("ZOO OK  %-10s %-8s parameter changes within tolerance (closest: %s at %.0f%% of "
                "it)\n",
                model.c_str(), mode, closestName.c_str(), 100 * closest);
    std::printf("ZOO OK  %-10s %-8s losses %.6f %.6f %.6f (reference %.6f %.6f %.6f)\n",
                model.c_str(), mode, run.losses[0], run.losses[1], run.losses[2],
                reference.losses[0], reference.losses[1], reference.losses[2]);
  }
}

TEST(ZooSteps, MLP) { checkModel("mlp", 8); }
TEST(ZooSteps, LeNet) { checkModel("lenet", 4); }
// 16x16 images: batch norm over a 1x1 map of two images is too ill-conditioned
// to compare.
TEST(ZooSteps, ResNet18) { checkModel("resnet18", 2, 8, 16); }
TEST(ZooSteps, GPTMini) { checkModel("gpt-mini", 2, 16); }
TEST(ZooSteps, BERTMini) { checkModel("bert-mini", 2, 16); }

} // namespace
