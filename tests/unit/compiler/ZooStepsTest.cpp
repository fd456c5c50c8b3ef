//===- ZooStepsTest.cpp - every zoo model trained three ways ---------------===//
//
// Three training steps of each zoo model from the same weights and batch,
// run on the reference executor, eagerly (one program per op) and compiled
// (one fused program per step): the losses of every step and every parameter
// after the third step must agree. The optimizer is SGD with momentum:
// Adam divides each gradient by its own magnitude, so where a gradient is
// as small as rounding noise its step of +-lr points anywhere and
// parameters cannot be compared elementwise (Adam's update kernel is
// checked on its own in CpuKernelTest, and in every compiled test step).
//
//===----------------------------------------------------------------------===//
#include "ZooTask.h"

#include "sinter/Compiler/StepCompiler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace {

using namespace sinter;

struct Run {
  std::vector<double> losses;
  std::vector<std::pair<std::string, std::vector<double>>> parameters;
};

Run train(const std::string &model, CompilerConfig config, int64_t batch, int64_t length,
          int64_t image) {
  compiler::install();
  set_compiler_config(config);
  reset_metrics();
  tools::ZooTask task = tools::makeZooTask(model, batch, length, /*seed=*/3, image);
  optim::SGD optimizer(task.model->parameters(), {.lr = 0.05, .momentum = 0.9});
  Run run;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    Tensor loss = task.loss();
    loss.backward();
    optimizer.step();
    mark_step();
    run.losses.push_back(loss.item<double>());
  }
  for (const auto &[name, p] : task.model->named_parameters())
    run.parameters.emplace_back(name, p.to_vector<double>());
  Metrics m = metrics();
  int64_t expected = config.use_reference ? 0 : m.steps;
  EXPECT_EQ(config.enabled ? m.compiled_steps : m.eager_steps, expected) << metrics_report();
  // The first step creates the momentum buffers, the second and third have
  // one structure: the third runs the second's executable.
  EXPECT_GE(m.repeated_graphs, 1) << metrics_report();
  if (config.enabled && !config.use_reference) {
    EXPECT_EQ(m.compilations, m.distinct_graphs) << metrics_report();
  }
  set_compiler_config({});
  return run;
}

/// |got - want| <= tolerance * max|want| (+ a floor for all-zero tensors).
void expectClose(const std::vector<double> &got, const std::vector<double> &want, double tolerance,
                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0, worst = 0;
  for (double w : want)
    scale = std::max(scale, std::fabs(w));
  for (size_t k = 0; k < got.size(); ++k)
    worst = std::max(worst, std::fabs(got[k] - want[k]));
  EXPECT_LE(worst, tolerance * scale + 1e-6)
      << what << ": max difference " << worst << " for values up to " << scale;
}

void checkModel(const std::string &model, int64_t batch, int64_t length = 8, int64_t image = 32) {
  Run reference = train(model, {.use_reference = true}, batch, length, image);
  for (bool compiled : {false, true}) {
    const char *mode = compiled ? "compiled" : "eager";
    Run run = train(model, {.enabled = compiled}, batch, length, image);
    // Float rounding in another order moves losses and parameters by far
    // less than these fractions of their size in three steps.
    expectClose(run.losses, reference.losses, 1e-4, model + " " + mode + " losses");
    ASSERT_EQ(run.parameters.size(), reference.parameters.size());
    for (size_t i = 0; i < run.parameters.size(); ++i)
      expectClose(run.parameters[i].second, reference.parameters[i].second, 1e-3,
                  model + " " + mode + " parameter " + run.parameters[i].first);
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
