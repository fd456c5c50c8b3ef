//===- GoldenModels.cpp - run a zoo model's step and dump it for PyTorch --===//
//
// Usage: golden_models <model> <out-dir> <reference|eager|compiled>
// Builds a zoo model (mlp, lenet, resnet18, gpt-mini, bert-mini) with its
// batch (tools/common/ZooTask) from a fixed seed, runs forward, loss and
// backward as one step in the given mode (the reference executor, one
// program per op, or one compiled program), and writes every parameter, the
// batch, the loss and every parameter gradient to <out-dir> (manifest.txt +
// raw little-endian files) for compare_with_torch.py to recompute with
// PyTorch. A step that did not run in the mode asked for (a fallback to the
// reference executor) is an error: it would compare the reference twice.
//
//===----------------------------------------------------------------------===//
#include "TensorDump.h"
#include "ZooTask.h"

#include "sinter/Compiler/StepCompiler.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  using namespace sinter;
  if (argc != 4) {
    std::fprintf(stderr, "usage: golden_models <model> <out-dir> <reference|eager|compiled>\n");
    return 2;
  }
  std::string model = argv[1], mode = argv[3];
  if (mode != "reference" && mode != "eager" && mode != "compiled") {
    std::fprintf(stderr, "golden_models: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  try {
    compiler::install();
    Session::Use session({.compiler = {.enabled = mode == "compiled",
                                       .use_reference = mode == "reference",
                                       .allow_fallback = false}});
    // Batch norm over two 2x2 maps (resnet18 at 16x16) is still well
    // conditioned; over 1x1 maps it is not.
    tools::ZooTask task = tools::makeZooTask(model, /*batch=*/2, /*length=*/16, /*seed=*/1234,
                                             /*imageSize=*/16);
    reset_metrics();
    Tensor loss = task.loss();
    loss.backward();
    std::vector<std::pair<std::string, Tensor>> parameters = task.model->named_parameters();
    mark_step(); // the loss and every gradient, as one step
    Metrics m = metrics();
    int64_t inMode = mode == "compiled" ? m.compiled_steps : m.eager_steps;
    if (m.steps != 1 || (mode != "reference" && inMode != 1) || m.fallbacks != 0) {
      std::fprintf(stderr, "golden_models: the step did not run %s:\n%s", mode.c_str(),
                   metrics_report().c_str());
      return 1;
    }
    tools::TensorDump dump(argv[2]);
    dump.write("input", "inputs", task.inputs);
    dump.write("input", "targets", task.targets);
    dump.write("output", "loss", loss);
    for (auto &[name, p] : parameters) {
      dump.write("param", name, p);
      dump.write("grad", name, p.grad());
    }
    std::printf("%s %s: loss %.6f, %zu parameter tensors\n", model.c_str(), mode.c_str(),
                loss.item<double>(), parameters.size());
  } catch (const Error &error) {
    std::fprintf(stderr, "golden_models: %s\n", error.what());
    return 1;
  }
  return 0;
}
