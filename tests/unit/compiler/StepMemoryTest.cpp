//===- StepMemoryTest.cpp - a compiled step's memory, planned and measured ===//
//
// Note [Step memory] in sinter/Metrics.h: plan_step() says, before a step
// runs, how many bytes it will allocate while running (its arena and its
// results); the caching allocator measures the same while it runs. For every
// zoo model, over the first step (optimizer state created) and later ones,
// the two are equal to the byte.
//
//===----------------------------------------------------------------------===//
#include "ZooTask.h"
#include "common/MlpStep.h"

#include "sinter/Compare.h"
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/runtime/Allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace sinter;

TEST(StepMemory, PlannedBeforeRunningEqualsMeasuredForEveryZooModel) {
  compiler::install();
  Session::Use session(Settings{});
  for (const char *model : {"mlp", "lenet", "resnet18", "gpt-mini", "bert-mini"}) {
    SCOPED_TRACE(model);
    tools::ZooTask task = tools::makeZooTask(model, /*batch=*/2, /*length=*/16, /*seed=*/5,
                                             /*imageSize=*/16);
    optim::AdamW optimizer(task.model->parameters(), {.lr = 1e-3});
    for (int step = 0; step < 3; ++step) {
      optimizer.zero_grad();
      task.loss().backward();
      optimizer.step();
      // Planning alone (no kernels built) and compiling give one plan.
      StepMemory quick = plan_step({.build_kernels = false});
      StepMemory planned = plan_step();
      EXPECT_EQ(quick.planned_peak_bytes, planned.planned_peak_bytes);
      EXPECT_EQ(quick.persistent_bytes, planned.persistent_bytes);
      EXPECT_GT(planned.arena_bytes, 0);
      EXPECT_EQ(planned.planned_peak_bytes, planned.arena_bytes + planned.result_bytes);
      EXPECT_GT(planned.persistent_bytes, 0);
      EXPECT_EQ(planned.measured_peak_bytes, -1) << "planned, not run";
      // What is live at the peak fits in the arena it was packed into, and the
      // by-line table (arena at the peak and results) covers it, most first.
      EXPECT_GT(planned.peak_tensor_bytes, 0);
      EXPECT_LE(planned.peak_tensor_bytes + planned.peak_workspace_bytes, planned.arena_bytes);
      int64_t byLine = 0;
      for (size_t i = 0; i < planned.peak_by_line.size(); ++i) {
        byLine += planned.peak_by_line[i].bytes;
        if (i > 0) {
          EXPECT_LE(planned.peak_by_line[i].bytes, planned.peak_by_line[i - 1].bytes);
        }
      }
      EXPECT_GE(byLine, planned.peak_tensor_bytes + planned.peak_workspace_bytes);
      // Note [Memory by category]: the same bytes by what they are in
      // training, and the inputs: every step has parameters, and its peak
      // is at the end of the forward pass (activations kept for the
      // backward pass) or at the end of the step (gradients); from the
      // second step on, AdamW's moments are inputs only its update reads.
      std::map<std::string, int64_t> category;
      int64_t stepBytes = 0, inputBytes = 0;
      for (const StepMemory::Category &c : planned.peak_by_category) {
        category[c.name] = c.bytes;
        bool input = c.name == "parameters" || c.name == "optimizer state" ||
                     c.name == "the batch and other inputs";
        (input ? inputBytes : stepBytes) += c.bytes;
      }
      EXPECT_EQ(stepBytes, byLine);
      EXPECT_EQ(inputBytes, planned.persistent_bytes);
      EXPECT_GT(category["parameters"], 0);
      EXPECT_GT(category["gradients"] + category["activations kept for the backward pass"], 0);
      EXPECT_GT(category["the batch and other inputs"], 0);
      if (step > 0) {
        EXPECT_GE(category["optimizer state"], 2 * category["parameters"]);
      }
      mark_step();
      StepMemory ran = metrics().last_step_memory;
      EXPECT_EQ(ran.planned_peak_bytes, planned.planned_peak_bytes) << "step " << step;
      EXPECT_EQ(ran.measured_peak_bytes, planned.planned_peak_bytes) << "step " << step;
      EXPECT_EQ(ran.persistent_bytes, planned.persistent_bytes) << "step " << step;
      EXPECT_NE(metrics_report().find(
                    "last compiled step's memory: " + std::to_string(planned.planned_peak_bytes) +
                    " bytes planned"),
                std::string::npos)
          << metrics_report();
    }
  }
}

TEST(StepMemory, NothingPendingPlansNothing) {
  compiler::install();
  mark_step();
  StepMemory planned = plan_step();
  EXPECT_EQ(planned.planned_peak_bytes, 0);
  EXPECT_EQ(planned.persistent_bytes, 0);
}

/// Three compiled AdamW steps of an MLP with four 512 x 512 weights and a
/// batch of 4 (its gradients outweigh its activations); the losses, and the
/// last step's memory.
std::vector<float> wideMlpLosses(bool clearGradientsBeforeMarkStep, StepMemory &memory) {
  compiler::install();
  Session::Use session(Settings{});
  manual_seed(3);
  auto model = models::mlp({.in_features = 512, .hidden = {512, 512, 512}, .num_classes = 512});
  optim::AdamW optimizer(model->parameters(), {.lr = 1e-3});
  Tensor x = randn({4, 512});
  Tensor y = from_vector<int64_t>({1, 7, 300, 511}, {4});
  std::vector<float> losses;
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    Tensor loss = nn::functional::cross_entropy((*model)(x), y);
    loss.backward();
    optimizer.step();
    if (clearGradientsBeforeMarkStep)
      optimizer.zero_grad();
    mark_step();
    losses.push_back(loss.item<float>());
    memory = metrics().last_step_memory;
  }
  for (const Tensor &p : model->parameters())
    EXPECT_EQ(p.grad().defined(), !clearGradientsBeforeMarkStep);
  return losses;
}

TEST(StepMemory, GradientsClearedBeforeMarkStepAreFreedAtTheirUpdate) {
  // Note [Scalars are copied, not shared]: when the step does not return its
  // gradients, each weight's AdamW update is its own kernel (the four
  // updates share only the learning rate's scalars), the scheduler runs it
  // once its gradient is complete, and the gradient dies there: one 1 MiB
  // weight gradient is live at a time, where a step that returns them holds
  // all four at its end. Every update is written into the state it replaces
  // (donation pairs results in the order they are written).
  StepMemory kept, cleared;
  std::vector<float> keeping = wideMlpLosses(false, kept);
  std::vector<float> clearing = wideMlpLosses(true, cleared);
  EXPECT_EQ(clearing, keeping) << "the same arithmetic";
  const int64_t weightGradient = 512 * 512 * 4;
  EXPECT_GE(kept.planned_peak_bytes, 4 * weightGradient);
  EXPECT_LT(cleared.planned_peak_bytes, 2 * weightGradient);
  EXPECT_EQ(kept.measured_peak_bytes, kept.planned_peak_bytes);
  EXPECT_EQ(cleared.measured_peak_bytes, cleared.planned_peak_bytes);
}

TEST(StepMemory, AStepThatCannotFitIsRefusedBeforeRunning) {
  // Note [Out of memory before running]: the plan needs more than
  // the memory limit (CompilerConfig::memory_limit) allows, so mark_step() throws at the user's
  // line, naming the bytes and the lines that hold memory, and runs nothing: the step runs once
  // memory allows.
  compiler::install();
  Session::Use session(Settings{});
  test_support::MlpStep mlp(1, 32, test_support::MlpStep::Optimizer::Sgd);
  mark_step();
  mlp.record();
  StepMemory planned = plan_step();
  Metrics before = metrics();
  // Room for everything held now, and all but a byte of the step.
  int64_t held = runtime::HostAllocator::get().stats().in_use;
  Settings limited = Session::current().settings();
  limited.compiler.memory_limit = held + planned.planned_peak_bytes - 1;
  try {
    Session(limited).mark_step();
    ADD_FAILURE() << "a step over the limit ran";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("StepMemoryTest.cpp"), std::string::npos) << message;
    EXPECT_NE(message.find("the step needs"), std::string::npos) << message;
    EXPECT_NE(message.find("under the memory limit (CompilerConfig::memory_limit, "
                           "SINTER_MEMORY_LIMIT); nothing was run"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("At the step's peak:\n"), std::string::npos) << message;
  }
  EXPECT_EQ(metrics().compiled_steps, before.compiled_steps) << "the refused step ran";
  EXPECT_EQ(metrics().execute_seconds, before.execute_seconds);
  EXPECT_EQ(runtime::HostAllocator::get().stats().in_use, held) << "something stayed allocated";
  // With one more byte it fits, and runs.
  limited.compiler.memory_limit = held + planned.planned_peak_bytes;
  Session(limited).mark_step();
  EXPECT_EQ(metrics().compiled_steps, before.compiled_steps + 1);
  EXPECT_EQ(metrics().last_step_memory.measured_peak_bytes, planned.planned_peak_bytes);
}

/// An MLP with SGD and momentum, after its first step (momentum buffers
/// exist); record() records the next.
struct SgdStep {
  Session::Use session{Settings{}};
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::SGD> optimizer;
  Tensor x, y;

  SgdStep() {
    compiler::install();
    manual_seed(2);
    model = models::mlp({.in_features = 32, .hidden = {64}, .num_classes = 4});
    optimizer = std::make_unique<optim::SGD>(model->parameters(),
                                             optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
    x = randn({16, 32});
    y = from_vector<int64_t>(std::vector<int64_t>(16, 1), {16});
    record();
    mark_step();
  }
  void record() {
    optimizer->zero_grad();
    nn::functional::cross_entropy((*model)(x), y).backward();
    optimizer->step();
  }
  int64_t parameterBytes() const {
    int64_t bytes = 0;
    for (const Tensor &p : model->parameters())
      bytes += runtime::HostAllocator::size_class(p.numel() * 4);
    return bytes;
  }
};

TEST(Donation, UpdatesTakeTheMemoryOfTheValuesTheyReplace) {
  // Note [Donation]: nothing outside the step holds the old parameters and
  // momentum buffers, so the new ones are written into their memory: the
  // step allocates only the gradients (kept in .grad, as in PyTorch), one
  // parameter's worth, not three (parameters, momentum, grads).
  SgdStep step;
  step.record();
  StepMemory planned = plan_step();
  EXPECT_EQ(planned.donated_bytes, 2 * step.parameterBytes()) << "updates were not donated";
  EXPECT_GE(planned.planned_peak_bytes, step.parameterBytes()) << "the gradients";
  EXPECT_LT(planned.planned_peak_bytes, 2 * step.parameterBytes());
  mark_step();
  EXPECT_EQ(metrics().last_step_memory.measured_peak_bytes, planned.planned_peak_bytes);
}

TEST(Donation, AValueStillHeldIsNotWrittenOver) {
  // A tensor that still holds a parameter's old value keeps it: that
  // parameter's update gets memory of its own.
  int64_t donatedResults = 0;
  {
    SgdStep alone;
    alone.record();
    donatedResults = plan_step().donated_bytes;
    mark_step();
  }
  SgdStep step;
  Tensor weight = step.model->parameters().front();
  Tensor snapshot = weight.detach(); // the value before the step's update
  std::vector<double> before = snapshot.to_vector<double>();
  step.record();
  StepMemory planned = plan_step();
  EXPECT_EQ(planned.donated_bytes,
            donatedResults - runtime::HostAllocator::size_class(weight.numel() * 4));
  mark_step();
  EXPECT_EQ(snapshot.to_vector<double>(), before) << "a held value was written over";
  EXPECT_NE(weight.to_vector<double>(), before) << "the parameter was not updated";
  EXPECT_EQ(metrics().last_step_memory.measured_peak_bytes, planned.planned_peak_bytes);
}

TEST(Donation, ARecompileForAHeldInputIsExplained) {
  // The same graph, compiled again because a value is now held outside the
  // step: the metrics say why, naming the input, once.
  SgdStep step;
  Tensor weight = step.model->parameters().front();
  Tensor snapshot;
  size_t before = metrics().recompile_reasons.size();
  for (int i = 0; i < 4; ++i) {
    if (i == 2)
      snapshot = weight.detach();
    step.record();
    mark_step();
  }
  std::vector<std::string> reasons = metrics().recompile_reasons;
  ASSERT_EQ(reasons.size(), before + 1);
  EXPECT_NE(reasons.back().find("StepMemoryTest.cpp"), std::string::npos) << reasons.back();
  EXPECT_NE(reasons.back().find("the same graph, but input 0 (f32[64, 32], from"),
            std::string::npos)
      << reasons.back();
  EXPECT_NE(reasons.back().find("is now held outside the step"), std::string::npos)
      << reasons.back();
}

TEST(Donation, AGraphKeptForAnotherBackwardKeepsItsInputs) {
  // backward(retain_graph) keeps the forward graph, and so the parameters'
  // old values it reads: a second backward after the step must see them,
  // not the updates written over them.
  SgdStep step;
  step.optimizer->zero_grad();
  Tensor loss = nn::functional::cross_entropy((*step.model)(step.x), step.y);
  loss.backward(Tensor(), /*retain_graph=*/true);
  Tensor weight = step.model->parameters().front();
  std::vector<double> first = weight.grad().to_vector<double>();
  step.optimizer->step();
  mark_step();
  step.optimizer->zero_grad();
  loss.backward();
  std::vector<double> second = weight.grad().to_vector<double>();
  // What a backward pass that read the updated weights would give.
  step.optimizer->zero_grad();
  nn::functional::cross_entropy((*step.model)(step.x), step.y).backward();
  std::vector<double> updated = weight.grad().to_vector<double>();
  // Two programs compute the old gradient (the gradient alone, then the
  // backward pass from the kept graph) with their loops vectorised apart,
  // and glibc's vector and scalar exp may differ in the last bit: equal to
  // float rounding (6e-8 of the largest element), where the updated weights
  // give a gradient 0.8 of it away.
  Comparison same =
      compare_values("the kept graph's gradient", second, first, {.of_largest = 1e-6});
  EXPECT_TRUE(same.ok) << same.message;
  Comparison moved = compare_values("the updated weights' gradient", updated, first, {});
  EXPECT_TRUE(
      std::all_of(updated.begin(), updated.end(), [](double v) { return std::isfinite(v); }));
  EXPECT_GT(moved.worst_difference, 0.1 * moved.largest) << moved.message;
  std::printf("kept graph: %.3g of the largest gradient apart; updated weights: %.3g\n",
              same.worst_difference / same.largest, moved.worst_difference / moved.largest);
}

TEST(Donation, AnInputTheStepAlsoReturnsKeepsItsValue) {
  // `same` folds to the old value itself (x * 1 is x), so the program returns
  // that input, copied out after the run: no result may take its memory.
  compiler::install();
  Session::Use session(Settings{});
  Tensor p = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  mark_step();
  Tensor same = p * 1.0;
  {
    NoGradGuard noGrad;
    p.copy_(p * 2.0);
  }
  mark_step();
  EXPECT_EQ(same.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(p.to_vector<double>(), (std::vector<double>{2, 4, 6, 8, 10, 12}));
}

/// gpt-mini's losses over `steps` compiled AdamW steps (batch 4, 128 tokens:
/// long enough that the step's peak is at the end of the forward pass, not
/// at the end of the step, where the gradients are) under `config`, and the
/// last step's memory.
std::vector<float> gptLosses(const CompilerConfig &config, int steps, StepMemory &memory) {
  compiler::install();
  Session::Use session({.compiler = config});
  tools::ZooTask task = tools::makeZooTask("gpt-mini", /*batch=*/4, /*length=*/128, /*seed=*/9);
  optim::AdamW optimizer(task.model->parameters(), {.lr = 1e-3});
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    Tensor loss = task.loss();
    loss.backward();
    optimizer.step();
    mark_step();
    losses.push_back(loss.item<float>());
    memory = metrics().last_step_memory;
  }
  return losses;
}

TEST(Rematerialization, ABudgetBelowThePeakTrainsWithIdenticalLosses) {
  // Note [Rematerialization]: without a budget, pointwise values (GELU's
  // output) are recomputed where the backward pass reads them; under a
  // budget below that step's memory, more is (layer norms, softmaxes, the
  // matmuls feeding them) until the plan fits or nothing is left to trade.
  // The arithmetic is the same, so the losses are equal to the bit.
  StepMemory free, least, fitted;
  std::vector<float> unconstrained = gptLosses({}, 3, free);
  EXPECT_GT(free.recomputed_values, 0);
  EXPECT_GT(free.recompute_operations, 0);
  EXPECT_EQ(free.pipeline_runs, 1); // no budget: the passes run once
  // A budget nothing can meet: everything worth trading is traded.
  std::vector<float> constrained = gptLosses({.memory_budget = 1}, 3, least);
  EXPECT_EQ(constrained, unconstrained);
  EXPECT_LT(least.planned_peak_bytes, free.planned_peak_bytes);
  EXPECT_EQ(least.measured_peak_bytes, least.planned_peak_bytes);
  EXPECT_GT(least.recomputed_values, free.recomputed_values);
  EXPECT_GT(least.recompute_operations, free.recompute_operations);
  // Nothing is left to trade, so running the passes again with less of the
  // budget for the arena would give the same plan: they ran once (Note
  // [Fitting a memory budget]).
  EXPECT_EQ(least.pipeline_runs, 1);
  // The pass's estimate is the planned arena (Note [One memory model]).
  EXPECT_EQ(least.estimated_arena_bytes, least.arena_bytes);
  EXPECT_EQ(free.estimated_arena_bytes, 0); // no budget: nothing estimated
  // A budget that can be met, below the unconstrained step: the plan fits.
  std::vector<float> fitting = gptLosses({.memory_budget = least.planned_peak_bytes}, 3, fitted);
  EXPECT_EQ(fitting, unconstrained);
  EXPECT_LE(fitted.planned_peak_bytes, least.planned_peak_bytes);
  EXPECT_EQ(fitted.measured_peak_bytes, fitted.planned_peak_bytes);
  // Its estimate is the plan, so the passes ran once.
  EXPECT_EQ(fitted.estimated_arena_bytes, fitted.arena_bytes);
  EXPECT_EQ(fitted.pipeline_runs, 1);
}

TEST(Rematerialization, ANegativeBudgetIsRefused) {
  const Session *before = &Session::current();
  try {
    Session::Use session({.compiler = {.memory_budget = -1}});
    ADD_FAILURE() << "a negative budget was accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("StepMemoryTest.cpp"), std::string::npos);
    EXPECT_NE(error.message().find("memory_budget is -1 bytes"), std::string::npos)
        << error.message();
  }
  EXPECT_EQ(&Session::current(), before) << "a refused session became current";
}

} // namespace

namespace {

/// Every element of `got` within `tolerance * (1 + |want|)` of `want`'s.
void expectElementsNear(const Tensor &got, const Tensor &want, double tolerance) {
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], tolerance * (1 + std::abs(w[i]))) << "element " << i;
}

TEST(InPlace, AKernelWritesOverTheIntermediateItReadsLast) {
  // Note [In-place kernels]: tanh(a) is written over a, its matmul input,
  // which dies there; the arena holds one of them, not both, and the
  // values are the reference executor's.
  compiler::install();
  manual_seed(3);
  Tensor x = randn({64, 128}), w = randn({128, 256}) * 0.1, v = randn({256, 32}) * 0.1;
  mark_step();
  auto record = [&] { return matmul(tanh(matmul(x, w)), v); };
  Session compiled{Settings{}}, reference({.compiler = {.use_reference = true}});
  Tensor out = record();
  StepMemory planned = compiled.plan_step();
  // The arena: the intermediate, and the result from its kernel on (Note
  // [Results in the arena]).
  int64_t intermediate = 64 * 256 * 4, result = 64 * 32 * 4;
  EXPECT_EQ(planned.arena_bytes, runtime::HostAllocator::size_class(intermediate + result));
  compiled.mark_step();
  Tensor expected = record();
  reference.mark_step();
  expectElementsNear(out, expected, 1e-4);
}

TEST(InPlace, ARowKernelWritesOverTheRowsItHasRead) {
  // A row kernel reads each row (its reductions) before it writes that row,
  // and writes its per-row results last: cross-entropy's gradient is written
  // over the logits it is computed from, though the same kernel also
  // returns each row's loss (results of two sizes), as in gpt-mini's step.
  compiler::install();
  manual_seed(4);
  Tensor x = randn({64, 128});
  Tensor y = from_vector<int64_t>(std::vector<int64_t>(64, 7), {64});
  auto record = [&](Tensor &w) {
    w = (randn({128, 256}) * 0.1).detach();
    w.requires_grad_();
    mark_step();
    Tensor loss = nn::functional::cross_entropy(matmul(x, w), y);
    loss.backward();
    return loss;
  };
  Tensor w, loss, wRef, lossRef;
  {
    Session::Use compiled(Settings{});
    manual_seed(5);
    loss = record(w);
    StepMemory planned = plan_step();
    // The weight's gradient (a result, in the arena) is computed from the
    // logits' gradient.
    int64_t logits = 64 * 256 * 4, grad = 128 * 256 * 4;
    EXPECT_LT(planned.arena_bytes, 2 * logits + grad) << "the logits and their gradient both kept";
    EXPECT_GE(planned.arena_bytes, logits + grad);
    mark_step();
  }
  {
    Session::Use reference({.compiler = {.use_reference = true}});
    manual_seed(5);
    lossRef = record(wRef);
    mark_step();
  }
  EXPECT_NEAR(loss.item<float>(), lossRef.item<float>(), 1e-5);
  expectElementsNear(w.grad(), wRef.grad(), 1e-5);
}

} // namespace
