//===- CompiledStepTest.cpp - whole training steps, compiled and run -------===//
//
// A training step (forward, loss, backward, optimizer update) is recorded
// with the C++ API, compiled for the CPU (lowering, the pass pipeline, every
// kernel rendered and compiled, the function translated into launches), run
// by runtime::CpuExecutable on the step's data, and compared with the
// reference executor: the loss and every updated parameter.
//
//===----------------------------------------------------------------------===//
#include "common/HalfSteps.h"
#include "common/OpTableSteps.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Compare.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/ProgramFile.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>

namespace {

using namespace sinter;
namespace F = nn::functional;

/// Compiles and runs the step computing `outputs` (all f32), and compares
/// each with the reference executor; `maxLaunches`, when given, bounds the
/// program's launches.
void checkCompiledStep(const std::string &what, const std::vector<Tensor> &outputs,
                       int64_t maxLaunches = -1) {
  std::vector<lazy::NodePtr> nodes;
  for (const Tensor &t : outputs)
    nodes.push_back(lazy::node_of(t));
  compiler::StepBuild step;
  std::string error;
  ASSERT_TRUE(compiler::compileStep(nodes, codegen::cpuTarget(), step, error)) << error;
  if (maxLaunches >= 0) {
    EXPECT_LE(static_cast<int64_t>(runtime::launchesOf(step.program).size()), maxLaunches);
  }
  // The step runs from its Program written as a file and read back (Note
  // [The Program as a file]), which must be the same Program.
  absl::StatusOr<runtime::Program> read =
      runtime::readProgram(runtime::writeProgram(step.program), what);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(*read, step.program) << what << ": the Program read back differs";
  auto executable = runtime::CpuExecutable::load(*read);
  ASSERT_TRUE(executable.ok()) << executable.status();

  // Arguments are read where their values' bytes are; results are written
  // into buffers of the program's sizes. The signature names each one's
  // dtype and shape.
  std::vector<const void *> arguments;
  for (const lazy::Node *node : lazy::topological_order(nodes))
    if (node->op == lazy::Op::Data) {
      const runtime::Program::Value &value = read->signature.arguments[arguments.size()];
      EXPECT_EQ(value.dtype, name(node->dtype));
      EXPECT_EQ(value.shape, node->shape);
      ASSERT_EQ((*executable)->argumentBytes(arguments.size()),
                node->value->size() * static_cast<int64_t>(elementSize(node->dtype)));
      arguments.push_back(node->value->bytes());
    }
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(read->signature.results[i].dtype, name(outputs[i].dtype()));
    EXPECT_EQ(read->signature.results[i].shape, outputs[i].shape());
  }
  ASSERT_EQ(step.program.results.size(), outputs.size());
  std::vector<std::vector<uint8_t>> results;
  std::vector<void *> pointers;
  for (size_t i = 0; i < outputs.size(); ++i)
    results.emplace_back((*executable)->resultBytes(i));
  for (auto &r : results)
    pointers.push_back(r.data());
  absl::Status status = (*executable)->run(arguments, pointers);
  ASSERT_TRUE(status.ok()) << status;
  // Results in the arena come back as blocks of their own (Note [Results in
  // the arena]).
  for (size_t i = 0; i < outputs.size(); ++i)
    if ((*executable)->resultInArena(i)) {
      ASSERT_NE(pointers[i], results[i].data());
      std::memcpy(results[i].data(), pointers[i], results[i].size());
      runtime::HostAllocator::get().deallocate(pointers[i]);
    }

  double worst = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::vector<float> expected;
    {
      reference::ReferenceGuard oracle; // the reference executor, even if a compiler is installed
      expected = outputs[i].to_vector<float>();
    }
    ASSERT_EQ(results[i].size(), expected.size() * sizeof(float)) << "output " << i;
    std::vector<float> got(expected.size());
    std::memcpy(got.data(), results[i].data(), results[i].size());
    Comparison c = compare_values(what + " output " + std::to_string(i), got, expected,
                                  {.of_largest = 1e-4, .absolute = 1e-7});
    ASSERT_TRUE(c.ok) << c.message;
    worst = std::max(worst, c.worst_difference / std::max(c.largest, 1e-30));
  }
  std::printf("STEP OK  %-24s %lld kernels, %zu launches, max relative diff %.1e\n", what.c_str(),
              static_cast<long long>(step.kernels), runtime::launchesOf(step.program).size(),
              worst);
}

/// One training step of `model` on (x, y) with AdamW: the loss, the updated
/// parameters and the gradients, as mark_step would compute them. The
/// gradients are compared themselves: AdamW's first step from a fresh
/// optimizer moves each parameter by about lr * sign(gradient), which any
/// gradient scaled by a positive factor would give too.
template <typename Model>
std::vector<Tensor> trainingStep(Model &model, const Tensor &x, const Tensor &y) {
  optim::AdamW adamw(model.parameters(), {.lr = 1e-2});
  mark_step(); // parameters and batch are data
  Tensor loss = F::cross_entropy(model(x), y);
  loss.backward();
  adamw.step();
  std::vector<Tensor> outputs = {loss};
  for (const Tensor &p : model.parameters())
    outputs.push_back(p);
  for (const Tensor &p : model.parameters())
    outputs.push_back(p.grad());
  return outputs;
}

TEST(CompiledStep, ResultsInTheArenaAreBlocksOfTheirOwn) {
  // Note [Results in the arena]: two results a step computes lie in its
  // arena, apart; a program whose two handed-out results share bytes (each
  // would be freed on its own) is refused when it is loaded.
  Tensor x = randn({64, 64});
  mark_step();
  Tensor a = x * 2.0, b = exp(x);
  std::vector<lazy::NodePtr> nodes = {lazy::node_of(a), lazy::node_of(b)};
  compiler::StepBuild step;
  std::string error;
  ASSERT_TRUE(compiler::compileStep(nodes, codegen::cpuTarget(), step, error)) << error;
  runtime::Program &program = step.program;
  ASSERT_EQ(program.results.size(), 2u);
  ASSERT_TRUE(program.inArena[0] && program.inArena[1]);
  int64_t first = program.buffers[program.results[0]].offset,
          second = program.buffers[program.results[1]].offset;
  EXPECT_GE(std::abs(first - second), 64 * 64 * 4);
  ASSERT_TRUE(runtime::CpuExecutable::load(program).ok());
  program.buffers[program.results[1]].offset = first;
  auto refused = runtime::CpuExecutable::load(program);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("two results in the arena share bytes"),
            std::string::npos)
      << refused.status();
  a.to_vector<float>(); // the pending values, computed
}

/// A second target as a backend would plug one in: the CPU's kernels, under
/// its own name and allocation sizes, with a launch shape per kernel
/// (Note [Launch shapes]).
class ShapedTarget final : public codegen::Target {
public:
  const codegen::TargetDescription &description() const override { return description_; }
  bool isLibraryCall(mlir::Operation *op) const override { return cpu_.isLibraryCall(op); }
  std::optional<codegen::LibraryStep> libraryStep(mlir::Operation *op) const override {
    return cpu_.libraryStep(op);
  }
  codegen::KernelPlan planKernel(ir::FusionOp fusion) const override {
    return cpu_.planKernel(fusion);
  }
  int64_t allocationSize(int64_t bytes) const override { return (bytes + 4095) / 4096 * 4096; }
  passes::KernelMemory kernelMemory(mlir::Operation *op) const override {
    return cpu_.kernelMemory(op);
  }
  mlir::FailureOr<codegen::RenderedKernels> render(mlir::ModuleOp module) const override {
    mlir::FailureOr<codegen::RenderedKernels> kernels = cpu_.render(module);
    if (mlir::succeeded(kernels))
      for (int64_t k = 0; k < kernels->count; ++k)
        kernels->shapes.push_back(
            {.grid = {k + 1, 2, 1}, .block = {128, 1, 1}, .sharedBytes = 64 * k});
    return kernels;
  }
  StatusOr<codegen::BuiltKernels> build(const codegen::RenderedKernels &kernels) const override {
    return cpu_.build(kernels);
  }

private:
  const codegen::Target &cpu_ = codegen::cpuTarget();
  codegen::TargetDescription description_{.name = "shaped", .alignment = 256};
};

TEST(CompiledStep, ASecondTargetPlugsInWithItsLaunchShapesAndAlignment) {
  // The pipeline names no target (Note [Choosing the target]): given
  // another, each kernel step carries that target's launch shape (through
  // the Program file too), every buffer its alignment, and the step still
  // computes the CPU target's bits.
  compiler::install();
  manual_seed(8);
  Tensor x = randn({8, 16}), w = randn({16, 4});
  Tensor y = F::softmax(matmul(x, w), -1) + 1.0;
  Tensor z = exp(x).sum({1});
  std::vector<lazy::NodePtr> nodes = {lazy::node_of(y), lazy::node_of(z)};
  compiler::StepBuild cpu, shaped;
  std::string error;
  ASSERT_TRUE(compiler::compileStep(nodes, codegen::cpuTarget(), cpu, error)) << error;
  ShapedTarget target;
  ASSERT_TRUE(compiler::compileStep(nodes, target, shaped, error)) << error;
  int kernels = 0;
  for (const runtime::Program::Step &step : shaped.program.steps) {
    if (step.kind != runtime::Program::Step::Kind::Kernel)
      continue;
    ++kernels;
    runtime::LaunchShape expected{
        .grid = {step.kernel + 1, 2, 1}, .block = {128, 1, 1}, .sharedBytes = 64 * step.kernel};
    EXPECT_EQ(step.shape, expected) << "kernel " << step.kernel;
  }
  EXPECT_GE(kernels, 2);
  for (const runtime::Program::Step &step : cpu.program.steps)
    EXPECT_EQ(step.shape, runtime::LaunchShape{}) << "the CPU's kernel " << step.kernel;
  for (const runtime::Program::Buffer &buffer : shaped.program.buffers) {
    if (buffer.offset >= 0) {
      EXPECT_EQ(buffer.offset % 256, 0) << "a buffer at " << buffer.offset;
    }
  }
  absl::StatusOr<runtime::Program> read =
      runtime::readProgram(runtime::writeProgram(shaped.program), "shaped");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, shaped.program);

  std::vector<std::vector<uint8_t>> outputs[2];
  for (int t = 0; t < 2; ++t) {
    auto executable = runtime::CpuExecutable::load(t == 0 ? cpu.program : *read);
    ASSERT_TRUE(executable.ok()) << executable.status();
    std::vector<const void *> arguments;
    for (const lazy::Node *node : lazy::topological_order(nodes))
      if (node->op == lazy::Op::Data)
        arguments.push_back(node->value->bytes());
    std::vector<void *> pointers;
    for (size_t i = 0; i < nodes.size(); ++i)
      outputs[t].emplace_back((*executable)->resultBytes(i));
    for (auto &bytes : outputs[t])
      pointers.push_back(bytes.data());
    ASSERT_TRUE((*executable)->run(arguments, pointers).ok());
    for (size_t i = 0; i < nodes.size(); ++i)
      if ((*executable)->resultInArena(i)) {
        std::memcpy(outputs[t][i].data(), pointers[i], outputs[t][i].size());
        runtime::HostAllocator::get().deallocate(pointers[i]);
      }
  }
  EXPECT_EQ(outputs[0], outputs[1]);

  // The device chooses the target: one CPU target per level; for CUDA,
  // without the simulator, the first GPU's, and without a GPU the reason,
  // said before anything is lowered.
  EXPECT_EQ(&codegen::cpuTarget("x86-64-v3"), &codegen::cpuTarget("x86-64-v3"));
  EXPECT_NE(&codegen::cpuTarget("x86-64-v3"), &codegen::cpuTarget());
  StatusOr<const codegen::Target *> chosen = codegen::targetFor(runtime::DeviceKind::Cpu);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, &codegen::cpuTarget());
  StatusOr<const codegen::Target *> cuda = codegen::targetFor(runtime::DeviceKind::Cuda);
  if (cuda::deviceCount() == 0) {
    EXPECT_EQ(cuda.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(cuda.status().message().find("steps on a GPU need one: no CUDA device"),
              std::string::npos)
        << cuda.status();
  } else {
    ASSERT_TRUE(cuda.ok()) << cuda.status();
    EXPECT_EQ((*cuda)->description().device, runtime::DeviceKind::Cuda);
  }
}

TEST(CompiledStep, MLPTrainingStep) {
  manual_seed(21);
  auto model = models::mlp({.in_features = 12, .hidden = {16, 16}, .num_classes = 5});
  Tensor x = randn({8, 12});
  Tensor y = from_vector<int64_t>({0, 1, 2, 3, 4, 0, 1, 2}, {8});
  checkCompiledStep("mlp (adamw, gradients)", trainingStep(*model, x, y));
}

TEST(CompiledStep, LeNetTrainingStep) {
  manual_seed(22);
  auto model = models::lenet(1, 10);
  Tensor x = randn({2, 1, 28, 28});
  Tensor y = from_vector<int64_t>({3, 7}, {2});
  checkCompiledStep("lenet (adamw, gradients)", trainingStep(*model, x, y));
}

TEST(CompiledStep, GPTTrainingStep) {
  manual_seed(23);
  models::GPT gpt({.vocab_size = 40, .context = 8, .layers = 2, .heads = 2, .d_model = 16});
  Tensor ids = from_vector<int64_t>({1, 5, 9, 3, 2, 8, 7, 4, 0, 6, 11, 12}, {2, 6});
  Tensor targets = from_vector<int64_t>({5, 9, 3, 2, 8, 7, 6, 11, 12, 13, 1, 2}, {12});
  // SGD, not Adam: the attention's key bias has a gradient of exactly zero in
  // exact arithmetic, so its computed gradient is rounding noise, and Adam
  // divides by its magnitude: the update would compare noise with noise.
  optim::SGD sgd(gpt.parameters(), {.lr = 0.1, .momentum = 0.9});
  mark_step();
  Tensor loss = F::cross_entropy(gpt(ids).reshape({12, 40}), targets);
  loss.backward();
  sgd.step();
  std::vector<Tensor> outputs = {loss};
  for (const Tensor &p : gpt.parameters())
    outputs.push_back(p);
  checkCompiledStep("gpt (sgd)", outputs);
}

} // namespace

namespace {

TEST(CompiledStep, TheSignatureSaysWhatEachArgumentIs) {
  // Note [The step's signature]: in a steady AdamW step with dropout, the
  // weights are parameters, Adam's moments optimizer state, its scalars
  // (bias corrections, the decay factor) step scalars, the dropout's key a
  // random key and the data batch inputs; every result is an output. Each
  // step scalar records its formula (Note [Step scalars as formulas]),
  // which gives, from the step count and the schedule alone, the very
  // number the optimizer passed: over the warmup and the cosine.
  manual_seed(7);
  nn::Linear linear(6, 3);
  optim::AdamW adamw(linear.parameters(), {.lr = 1e-2, .weight_decay = 0.05});
  optim::WarmupCosine schedule(adamw, 2, 5, 1e-4);
  Tensor x = randn({4, 6});
  Tensor y = from_vector<int64_t>({0, 1, 2, 0}, {4});
  auto step = [&] {
    adamw.zero_grad();
    Tensor loss = F::cross_entropy(F::dropout(linear.forward(x), 0.25, true), y);
    loss.backward();
    adamw.step();
    schedule.step();
    return loss;
  };
  mark_step();
  step();
  mark_step(); // the moments exist from here on
  using Shapes = std::vector<std::vector<int64_t>>;
  for (int64_t t = 2; t <= 6; ++t) {
    double lr = schedule.schedule().at(t - 1); // the rate this step runs with
    Tensor loss = step();
    std::vector<lazy::NodePtr> nodes = {lazy::node_of(loss)};
    for (const Tensor &p : linear.parameters())
      nodes.push_back(lazy::node_of(p));
    runtime::Program program;
    compiler::StepBuild planned;
    std::string error;
    ASSERT_TRUE(compiler::planStep(nodes, codegen::cpuTarget(), program, planned, error)) << error;
    std::vector<const lazy::Node *> data;
    for (const lazy::Node *node : lazy::topological_order(nodes))
      if (node->op == lazy::Op::Data)
        data.push_back(node);
    ASSERT_EQ(data.size(), program.signature.arguments.size());
    std::map<std::string, Shapes> byRole;
    std::set<std::string> formulas;
    for (size_t a = 0; a < data.size(); ++a) {
      const runtime::Program::Value &value = program.signature.arguments[a];
      byRole[runtime::nameOf(value.role)].push_back(value.shape);
      if (value.role != runtime::Program::Role::StepScalar)
        continue;
      ASSERT_TRUE(value.formula.has_value());
      formulas.insert(runtime::nameOf(value.formula->kind));
      float expected = static_cast<float>(value.formula->at(lr, t));
      ASSERT_EQ(data[a]->dtype, DType::f32);
      float passed = 0;
      std::memcpy(&passed, data[a]->value->bytes(), sizeof passed);
      EXPECT_EQ(std::bit_cast<uint32_t>(passed), std::bit_cast<uint32_t>(expected))
          << runtime::nameOf(value.formula->kind) << " at t=" << t << ": " << passed << " vs "
          << expected;
    }
    EXPECT_EQ(formulas, (std::set<std::string>{"adam_step_size", "adam_second_moment_scale",
                                               "decoupled_weight_decay"}));
    auto sorted = [](Shapes shapes) {
      std::sort(shapes.begin(), shapes.end());
      return shapes;
    };
    EXPECT_EQ(sorted(byRole["parameter"]), (Shapes{{3}, {3, 6}}));
    EXPECT_EQ(sorted(byRole["optimizer_state"]), (Shapes{{3}, {3}, {3, 6}, {3, 6}}));
    EXPECT_EQ(sorted(byRole["batch_input"]), (Shapes{{4}, {4, 6}}));
    EXPECT_EQ(byRole["random_key"], (Shapes{{}}));
    EXPECT_EQ(byRole["step_scalar"], (Shapes(3, std::vector<int64_t>{})));
    EXPECT_EQ(byRole.count("output"), 0u);
    ASSERT_EQ(program.signature.results.size(), 3u);
    for (const runtime::Program::Value &value : program.signature.results)
      EXPECT_EQ(value.role, runtime::Program::Role::Output);
    mark_step();
  }
}

} // namespace

namespace {

TEST(CompiledStep, DropoutDrawsNewMasksEveryStepFromOneProgram) {
  compiler::install();
  Session::Use session({.compiler = {.enabled = true}});
  manual_seed(5);
  Tensor x = ones({32, 64});
  mark_step();
  reset_metrics();
  std::vector<std::vector<float>> masks;
  for (int step = 0; step < 3; ++step) {
    Tensor y = F::dropout(x, 0.5, /*training=*/true);
    std::vector<float> expected;
    {
      reference::ReferenceGuard oracle;
      expected = y.to_vector<float>();
    }
    mark_step(); // compiled
    std::vector<float> compiled = y.to_vector<float>();
    EXPECT_EQ(compiled, expected) << "step " << step;
    masks.push_back(compiled);
  }
  EXPECT_NE(masks[0], masks[1]);
  EXPECT_NE(masks[1], masks[2]);
  Metrics m = metrics();
  EXPECT_EQ(m.compiled_steps, 3);
  EXPECT_EQ(m.distinct_graphs, 1) << "the random key is data: one program for every step";
  EXPECT_EQ(m.compilations, 1);
}

} // namespace

namespace {

TEST(CompiledStep, ADeepScalarChainIsCopiedOncePerLargeReader) {
  // Note [Scalars are copied, not shared]: each level reads the one before
  // twice (2^40 paths lead to the first), and each of the two large readers
  // gets one copy of every level: two kernels.
  Tensor s = from_vector<float>({0.5f}, {1});
  for (int level = 0; level < 40; ++level)
    s = exp(s * -1.0) * 0.5 + s * 0.5;
  std::vector<float> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = std::sin(0.37f * static_cast<float>(i));
  Tensor a = from_vector(values, {256, 256}), b = from_vector(values, {1 << 16});
  checkCompiledStep("a deep scalar chain", {a * s, b - s}, 2);
}

TEST(CompiledStep, ExpIsExactWhereItUnderflowsAndAtSpecialValues) {
  // The kernels' exp (sinter_exp) skips libmvec's slow path below -104,
  // where expf is +0; above that it is libmvec's (whose special lanes are
  // glibc's scalar expf: the same bits as std::exp). 123 values: fifteen
  // vectors of eight and a scalar tail.
  const std::vector<float> special = {
      -INFINITY, -1e30f, -200.0f, -104.5f, -104.0f, -103.98f, -103.9f, -100.0f, -90.0f,   -87.5f,
      -1.0f,     0.0f,   1.0f,    88.0f,   89.0f,   INFINITY, NAN,     -0.0f,   -103.97f, -50.0f};
  std::vector<float> values;
  for (int i = 0; values.size() < 3 * 41; ++i)
    values.push_back(special[(i * 7) % special.size()]);
  compiler::install();
  Session::Use session({.compiler = {.enabled = true}});
  Tensor x = from_vector(values, {3, 41});
  mark_step();
  reset_metrics();
  std::vector<float> got = exp(x).to_vector<float>();
  EXPECT_EQ(metrics().compilations, 1) << metrics_report();
  EXPECT_TRUE(metrics().fallback_reasons.empty()) << metrics_report();
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    float v = values[i], e = std::exp(v);
    SCOPED_TRACE(testing::Message() << "exp(" << v << ") at " << i);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(got[i]));
    } else if (v < -87.0f || v > 87.0f || e == 0.0f || e == 1.0f) {
      uint32_t gotBits, expectedBits;
      std::memcpy(&gotBits, &got[i], sizeof gotBits);
      std::memcpy(&expectedBits, &e, sizeof expectedBits);
      EXPECT_EQ(gotBits, expectedBits) << "got " << got[i] << ", expected " << e;
    } else { // libmvec's vector lanes may differ from expf in the last bit
      EXPECT_LE(std::fabs(got[i] - e), std::fabs(std::nextafter(e, INFINITY) - e));
    }
  }
  EXPECT_GT(std::exp(-103.9f), 0.0f) << "the test needs a value just above the underflow";
}

TEST(CompiledStep, EachSessionRunsItsStepsWithItsOwnSettings) {
  // Note [Sessions]: session.mark_step() runs with that session's settings
  // whatever is current; mark_step() and reads with the current one's.
  compiler::install();
  Session compiled({.compiler = {.enabled = true, .allow_fallback = false}});
  Session::Use eager({.compiler = {.enabled = false, .allow_fallback = false}});
  Tensor x = from_vector<float>({1, -2, 3, 4, 0.5f, 6}, {2, 3});
  mark_step();
  auto record = [&] { return F::softmax(x * 2.0, 1) * x; };
  std::vector<float> expected;
  {
    reference::ReferenceGuard oracle;
    expected = record().to_vector<float>();
  }
  reset_metrics();
  Tensor first = record();
  compiled.mark_step();
  Metrics m = metrics();
  EXPECT_EQ(m.compiled_steps, 1) << metrics_report();
  EXPECT_EQ(m.eager_steps, 0) << metrics_report();
  Tensor second = record();
  mark_step(); // the current session's: eager
  m = metrics();
  EXPECT_EQ(m.compiled_steps, 1) << metrics_report();
  EXPECT_EQ(m.eager_steps, 1) << metrics_report();
  {
    // A read under the compiled session: exp and add fused into one kernel
    // (op by op, they would be two).
    Session::Use inner(compiled);
    int64_t launched = metrics().kernels_launched;
    std::vector<float> read = (exp(x) + 1.0).to_vector<float>();
    EXPECT_EQ(metrics().kernels_launched - launched, 1) << metrics_report();
    EXPECT_FLOAT_EQ(read[1], std::exp(-2.0f) + 1.0f);
  }
  for (const Tensor &t : {first, second}) {
    Comparison c = compare_values("step", t.to_vector<float>(), expected, {.of_largest = 1e-5});
    EXPECT_TRUE(c.ok) << c.message;
  }
  EXPECT_EQ(metrics().fallbacks, 0) << metrics_report();
}

TEST(CompiledStep, ReadingAPendingTensorRunsItCompiled) {
  compiler::install();
  Session::Use session({.compiler = {.enabled = true}});
  Tensor x = from_vector<float>({1, -2, 3, 4, 0.5f, 6}, {2, 3});
  mark_step();
  reset_metrics();
  auto record = [&] { return (F::softmax(x * 2.0, 1) * x).sum(); };
  double expected;
  {
    reference::ReferenceGuard oracle;
    expected = record().item<double>();
  }
  EXPECT_EQ(metrics().compilations, 0) << "the oracle compiles nothing";
  double first = record().item<double>();  // its graph alone, compiled
  double second = record().item<double>(); // the same structure: the cached program
  EXPECT_NEAR(first, expected, 1e-5 * std::fabs(expected));
  EXPECT_EQ(first, second);
  Metrics m = metrics();
  EXPECT_EQ(m.compilations, 1) << metrics_report();
  EXPECT_EQ(m.steps, 0) << "reading a tensor is not a step";
  EXPECT_TRUE(m.fallback_reasons.empty()) << metrics_report();
}

} // namespace

namespace {

/// Records the step `record` makes twice, on the reference executor and as
/// one compiled step (mark_step), and compares every tensor it returns.
void expectCompiledStepMatchesReference(const std::function<std::vector<Tensor>()> &record,
                                        const Tolerance &tolerance) {
  compiler::install();
  Session::Use session({.compiler = {.enabled = true}});
  std::vector<std::vector<float>> expected;
  {
    reference::ReferenceGuard oracle;
    for (const Tensor &t : record())
      expected.push_back(t.to_vector<float>());
  }
  reset_metrics();
  std::vector<Tensor> results = record();
  mark_step();
  EXPECT_EQ(metrics().compiled_steps, 1) << metrics_report();
  for (size_t k = 0; k < results.size(); ++k) {
    Comparison c = compare_values("result " + std::to_string(k), results[k].to_vector<float>(),
                                  expected[k], tolerance);
    EXPECT_TRUE(c.ok) << c.message;
  }
}

TEST(CompiledStep, HalfPrecisionValuesHaveTheReferencesBits) {
  // Note [Half precision in kernels]: f16 and bf16 in memory, f32 in
  // arithmetic, each op's result rounded once, as the reference rounds it.
  compiler::install();
  for (DType half : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(name(half));
    std::vector<std::vector<double>> expected = test_support::halfStepOnTheReference(half);
    for (bool compiled : {true, false}) { // one fused step, or each op on its own
      SCOPED_TRACE(compiled ? "compiled" : "eager");
      Session::Use session({.compiler = {.enabled = compiled, .allow_fallback = false}});
      reset_metrics();
      std::vector<Tensor> results = test_support::halfPrecisionStep(half);
      mark_step();
      EXPECT_EQ(metrics().compiled_steps, compiled ? 1 : 0) << metrics_report();
      EXPECT_EQ(metrics().eager_steps, compiled ? 0 : 1) << metrics_report();
      EXPECT_EQ(results[0].dtype(), half);
      test_support::expectHalfStepBits(results, expected);
    }
  }
}

TEST(CompiledStep, EveryRowOfTheOpTableIsTheReferences) {
  // Note [The op table]: each elementwise op, on each dtype its row takes,
  // in one fused step and eagerly, against the reference executor.
  compiler::install();
  std::vector<std::vector<double>> expected = test_support::opTableStepOnTheReference();
  EXPECT_GE(expected.size(), 60u); // 23 rows, most on several dtypes
  for (bool compiled : {true, false}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    Session::Use session({.compiler = {.enabled = compiled, .allow_fallback = false}});
    reset_metrics();
    std::vector<test_support::TableResult> results = test_support::opTableStep();
    mark_step();
    EXPECT_EQ(metrics().compiled_steps, compiled ? 1 : 0) << metrics_report();
    EXPECT_EQ(metrics().fallbacks, 0) << metrics_report();
    test_support::expectOpTableStep(results, expected);
  }
}

TEST(CompiledStep, AnMlpInBf16WithF32ParametersTrainsAsTheReference) {
  // As autocast: parameters and their AdamW state in f32, the forward and
  // backward passes' activations in bf16, the loss in f32. A product
  // computed in f32 (the compiled step) and in double (the reference)
  // rounds to different bf16 neighbours where it lies within f32's error
  // of a tie: one element 2^-8 apart, rarely; the tolerance allows that,
  // and the bits are held exactly by HalfPrecisionValuesHaveTheReferencesBits.
  expectCompiledStepMatchesReference(
      [] {
        manual_seed(31);
        auto model = models::mlp({.in_features = 12, .hidden = {16}, .num_classes = 5});
        std::vector<Tensor> parameters = model->parameters();
        optim::AdamW adamw(parameters, {.lr = 1e-2});
        Tensor x = randn({8, 12});
        Tensor y = from_vector<int64_t>({0, 1, 2, 3, 4, 0, 1, 2}, {8});
        auto bf16 = [](const Tensor &t) { return t.to(DType::bf16); };
        Tensor h = F::relu(F::linear(bf16(x), bf16(parameters[0]), bf16(parameters[1])));
        Tensor logits = F::linear(h, bf16(parameters[2]), bf16(parameters[3]));
        Tensor loss = F::cross_entropy(logits.to(DType::f32), y);
        loss.backward();
        adamw.step();
        std::vector<Tensor> outputs = {loss, h};
        for (const Tensor &p : parameters)
          outputs.push_back(p);
        for (const Tensor &p : parameters)
          outputs.push_back(p.grad());
        return outputs;
      },
      {.of_largest = 1e-2});
  EXPECT_EQ(metrics().fallbacks, 0) << metrics_report();
}

TEST(CompiledStep, AnInputIsNotWrittenOverWhileALaterResultReadsIt) {
  // Note [Donation] (sinter/Passes/BufferAssignment.h): one loop writes
  // its results at each index in turn, each computed as it is written, so an
  // input that a later result reads cannot take an earlier result: the
  // later one would read what the earlier just wrote there. Here one row
  // kernel computes pow(|v| + 0.5, tanh(v)) for v = x / (|y| + 1), y's
  // gradient (which reads y's sign) and x's; y dies with the step, and was
  // given to the pow, which flipped the sign of y's gradient. Found by the
  // random graphs (seed 1015, graph 4).
  expectCompiledStepMatchesReference(
      [] {
        // Inputs held by nothing but the step: donatable.
        Tensor x = from_vector<float>({0.52f, 1.04f, -1.08f, -0.19f}, {4, 1}).requires_grad_();
        Tensor y = from_vector<float>({0.86f, -0.15f, -1.34f, 1.11f, -1.19f, 0.13f, -0.76f, 1.33f,
                                       -0.98f, -0.80f, -0.26f, 0.62f},
                                      {4, 3})
                       .requires_grad_();
        Tensor v = x / (abs(y) + 1);
        Tensor out = pow(abs(v) + 0.5, tanh(v));
        (out * from_vector<float>({-0.42f, -1.27f, 0.21f, -0.73f, 0.87f, 0.28f, -0.91f, -0.89f,
                                   -0.60f, 0.06f, 1.17f, -1.24f},
                                  {4, 3}))
            .sum()
            .backward();
        return std::vector<Tensor>{out, y.grad(), x.grad()};
      },
      {.of_largest = 1e-5, .absolute = 1e-7});
}

TEST(CompiledStep, ASmallValueTheStepReturnsIsNotARowKernelsResult) {
  // A [4, 1] mask read through a broadcast by a layer norm over [2, 4, 4]
  // (a row kernel of 8 rows) is computed in that kernel at the broadcast's
  // indices; the step also returns it, and a row kernel's results are whole
  // rows or one value per row: it was written as 8 values into its 4
  // (Fusion.cpp canMerge), corrupting its neighbours. Found by the random
  // graphs (seed 2014, graph 14).
  expectCompiledStepMatchesReference(
      [] {
        std::vector<float> xs(32);
        for (size_t i = 0; i < xs.size(); ++i)
          xs[i] = std::sin(1.3f * static_cast<float>(i));
        Tensor x = from_vector(xs, {2, 4, 4}).requires_grad_();
        Tensor m = from_vector<float>({1.25f, 0.52f, -0.36f, 0.27f}, {4, 1});
        Tensor mask = m > 0.25;
        Tensor y = F::layer_norm(x * mask.to(DType::f32) + x * 0.5, {4});
        (y * y).sum().backward();
        return std::vector<Tensor>{mask, y, x.grad()};
      },
      {.of_largest = 1e-5, .absolute = 1e-6});
}

} // namespace

namespace {

TEST(CompiledStep, AMaximumsGradientTestsTheBitsItWasTakenOf) {
  // The gradient of amax is x == max(x): a kernel that recomputed x
  // (sigmoid(x) * 2 - 1 here) instead of reading it could round it apart
  // from the x the maximum was taken of (glibc's vector and scalar exp
  // differ in the last bit), and rows whose test failed got no gradient
  // (FusionPolicy canRecompute). Found by the random graphs (seed 2015,
  // graph 3).
  expectCompiledStepMatchesReference(
      [] {
        std::vector<float> xs(171 * 4), ws(57);
        for (size_t i = 0; i < xs.size(); ++i)
          xs[i] = 1.5f * std::sin(0.61f * static_cast<float>(i) + 0.3f);
        for (size_t i = 0; i < ws.size(); ++i)
          ws[i] = std::cos(0.77f * static_cast<float>(i));
        Tensor x = from_vector(xs, {171, 4}).requires_grad_();
        Tensor y = sigmoid(x.slice(0, 1, 171, 3)) * 2 - 1;
        Tensor m = y.amax({1}, true).reshape({57});
        (F::softmax(m, 0) * from_vector(ws, {57})).sum().backward();
        return std::vector<Tensor>{m, x.grad()};
      },
      {.of_largest = 1e-5, .absolute = 1e-7});
}

} // namespace
