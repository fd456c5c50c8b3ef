//===- ZooStepsTest.cpp - every zoo model trained three ways ---------------===//
//
// Three training steps of each zoo model from the same weights and batch,
// run on the reference executor, eagerly (one program per op) and compiled
// (one fused program per step): the losses of every step, and how far every
// parameter moved in the three steps, must agree (ZooTraining.h). Adam's
// update kernel is checked on its own in CpuKernelTest, and in every
// compiled test step.
//
//===----------------------------------------------------------------------===//
#include "ZooTraining.h"

#include "sinter/Compare.h"
#include "sinter/Compiler/StepCompiler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace {

using namespace sinter;

using zoo::ZooRun;

ZooRun train(const std::string &model, CompilerConfig config, int64_t batch, int64_t length,
             int64_t image) {
  ZooRun run = zoo::trainThreeSteps(model, {.compiler = config}, batch, length, image);
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

void checkModel(const std::string &model, int64_t batch, int64_t length = 8, int64_t image = 32) {
  ZooRun reference = train(model, {.use_reference = true}, batch, length, image);
  for (bool compiled : {false, true}) {
    ZooRun run = train(model, {.enabled = compiled}, batch, length, image);
    zoo::expectSameTraining(model + (compiled ? " compiled" : " eager"), run, reference);
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
