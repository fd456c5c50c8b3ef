//===- sinter-bench.cpp - training-step speed and memory, eager vs compiled -===//
//
// Trains a zoo model for a few steps (AdamW, a fixed synthetic batch) in each
// mode asked for, and reports per mode: the median step time over --steps
// timed steps (after --warmup untimed ones, which include compilation),
// samples per second, the peak of tensor memory, kernels launched per step
// and the compile time. Both modes start from the same weights.
//
//   sinter-bench --model gpt-mini --batch-size 8 --steps 10 --mode both
//   sinter-bench --model mlp --json          (one JSON object per mode)
//   sinter-bench --model gpt-mini --dump-weights DIR   (for torch_baseline.py)
//   sinter-bench --model gpt-mini --batch-size auto --memory-budget 256MiB
//       --mode compiled --check-reference   (the chosen batch, checked)
//   sinter-bench --model gpt-mini --device cuda --compile-only --arch sm_80,sm_90 --json
//       (the step's CUDA kernels through NVRTC and ptxas: each one's registers,
//       spills and shared memory; no GPU needed)
//
//===----------------------------------------------------------------------===//
#include "LargestBatch.h"
#include "Ptxas.h"
#include "TensorDump.h"
#include "ToolMain.h"
#include "ZooTask.h"

#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/Artifact.h"
#include "sinter/runtime/ByteCount.h"
#include "sinter/runtime/CoreShare.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Nvrtc.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <unistd.h>

namespace {

using namespace sinter;
using Clock = std::chrono::steady_clock;

/// The command line: one field per flag (their help in main()).
struct Options {
  std::string model = "gpt-mini";
  std::string batchSize = "8";
  std::string memoryBudget;
  std::string scaleLrFrom;
  int64_t length = 128;
  int64_t steps = 10;
  int64_t warmup = 2;
  std::string mode = "both";
  int64_t threads = 0;
  bool json = false;
  bool planOnly = false;
  bool memoryReport = false;
  bool checkReference = false;
  bool keepGradients = false;
  std::string device;
  bool compileOnly = false;
  std::string arch = "sm_80,sm_90";
  std::string dumpWeights;
};

struct Result {
  std::string mode;
  double stepMsMedian = 0;
  double samplesPerSecond = 0;
  int64_t peakBytes = 0;
  double kernelsPerStep = 0;
  double compileSeconds = 0;
  double firstLoss = 0, lastLoss = 0;
  /// Steps and reads that ran on the reference executor (Note [Fallbacks
  /// are said]); a benchmark with any is refused, so reported as 0.
  int64_t fallbacks = 0;
  /// The last step's memory (Note [Step memory]); compiled mode only.
  std::optional<StepMemory> memory;
  /// On a CUDA device: bytes copied to it and back a measured step (the
  /// values stay there, Note [Two forms of a value]: the step scalars in,
  /// the loss read out).
  std::optional<runtime::CudaDevice::Traffic> traffic;
};

using Json = nlohmann::ordered_json;

Json orNull(const std::optional<StepMemory> &memory, int64_t StepMemory::*field) {
  return memory ? Json((*memory).*field) : Json(nullptr);
}

/// `value` as --json prints it: nlohmann-json's escaping and numbers (a
/// NaN is null), on one line with a space after each ':' and ','.
std::string jsonText(const Json &value) {
  std::string text;
  if (value.is_object()) {
    for (const auto &[key, item] : value.items())
      text += (text.empty() ? "{" : ", ") + Json(key).dump() + ": " + jsonText(item);
    return text.empty() ? "{}" : text + "}";
  }
  if (value.is_array()) {
    for (const Json &item : value)
      text += (text.empty() ? "[" : ", ") + jsonText(item);
    return text.empty() ? "[]" : text + "]";
  }
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void printJson(const Json &object) { std::printf("%s\n", jsonText(object).c_str()); }

void dumpWeights(const tools::ZooTask &task, const std::string &dir) {
  tools::TensorDump dump(dir);
  dump.write("input", "inputs", task.inputs);
  dump.write("input", "targets", task.targets);
  for (const auto &[name, p] : task.model->named_parameters())
    dump.write("param", name, p);
}

double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times.size() % 2 == 1 ? times[times.size() / 2]
                               : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
}

/// Records one AdamW training step of `task` (not run until mark_step) and
/// returns its loss. Without `keepGradients` the gradients are cleared once
/// the update is recorded, so the step does not return them and each
/// parameter is updated as soon as its gradient is complete (Note [Scalars
/// are copied, not shared] in passes/include/sinter/Passes/FusionPolicy.h).
Tensor recordStep(const tools::ZooTask &task, optim::AdamW &optimizer, bool keepGradients) {
  optimizer.zero_grad();
  Tensor loss = task.loss();
  loss.backward();
  optimizer.step();
  if (!keepGradients)
    optimizer.zero_grad();
  return loss;
}

/// One mode's model and optimizer, kept between the measured phases.
struct Run {
  std::string mode;
  /// The tool's session (SINTER_DEBUG and the rest from the environment,
  /// the budget from the flag), compiled or eager as `mode` says.
  Session session;
  tools::ZooTask task;
  std::unique_ptr<optim::AdamW> optimizer;
  /// --keep-gradients: the step returns them instead of clearing them.
  bool keepGradients = false;

  /// One training step in this run's mode; its loss and wall time (ms).
  std::pair<double, double> step() {
    Session::Use use(session);
    Clock::time_point start = Clock::now();
    Tensor loss = recordStep(task, *optimizer, keepGradients);
    mark_step();
    double value = loss.item<double>();
    return {value, std::chrono::duration<double, std::milli>(Clock::now() - start).count()};
  }
};

/// `heldBefore`: bytes in use before this run's model existed (another
/// mode's model, kept for interleaved timing), not counted in its peak.
Result bench(Run &run, int64_t batch, int64_t steps, int64_t warmup, int64_t heldBefore) {
  reset_metrics();
  runtime::HostAllocator &allocator = runtime::HostAllocator::get();
  Result result;
  result.mode = run.mode;
  std::vector<double> times;
  int64_t launchedBefore = 0;
  const Device device = run.session.device();
  runtime::CudaDevice *cuda = nullptr;
  if (device.isCuda())
    if (StatusOr<runtime::CudaDevice *> opened = runtime::cudaDevice(device.index()); opened.ok())
      cuda = *opened;
  runtime::CudaDevice::Traffic copiedBefore;
  for (int64_t step = 0; step < warmup + steps; ++step) {
    if (step == warmup) {
      allocator.reset_peak();
      launchedBefore = metrics().kernels_launched;
      if (cuda != nullptr)
        copiedBefore = cuda->traffic();
    }
    auto [loss, ms] = run.step();
    if (step >= warmup)
      times.push_back(ms);
    (step == 0 ? result.firstLoss : result.lastLoss) = loss;
  }
  Metrics m = metrics();
  result.stepMsMedian = median(times);
  result.samplesPerSecond = 1000.0 * static_cast<double>(batch) / result.stepMsMedian;
  result.peakBytes = allocator.stats().peak_in_use - heldBefore;
  result.kernelsPerStep =
      static_cast<double>(m.kernels_launched - launchedBefore) / static_cast<double>(steps);
  result.compileSeconds = m.compile.total();
  if (run.mode == "compiled")
    result.memory = m.last_step_memory;
  if (cuda != nullptr && steps > 0) {
    runtime::CudaDevice::Traffic copied = cuda->traffic();
    result.traffic = runtime::CudaDevice::Traffic{(copied.toDevice - copiedBefore.toDevice) / steps,
                                                  (copied.toHost - copiedBefore.toHost) / steps};
  }
  result.fallbacks = m.fallbacks;
  bool ran = run.mode == "compiled" ? m.compiled_steps == m.steps : m.eager_steps == m.steps;
  if (!ran || m.fallbacks != 0)
    throwError("some steps did not run " + run.mode + ":\n" + metrics_report(), Loc::current());
  return result;
}

/// Note [Interleaved timing]
/// A shared machine's speed drifts by 10-30% over a minute, so two modes
/// timed one after the other compare the machine as much as the modes. With
/// --mode both, after each mode's own run (which gives its peak memory,
/// kernels, compile time and losses), both models train `steps` more steps
/// in alternation (eager then compiled, then compiled then eager, ...) and
/// the medians of these steps are the reported step times.
void timeInterleaved(std::vector<Run> &runs, std::vector<Result> &results, int64_t batch,
                     int64_t steps) {
  std::vector<std::vector<double>> times(runs.size());
  for (int64_t step = 0; step < steps; ++step)
    for (size_t k = 0; k < runs.size(); ++k) {
      size_t r = step % 2 == 0 ? k : runs.size() - 1 - k;
      times[r].push_back(runs[r].step().second);
    }
  for (size_t r = 0; r < runs.size(); ++r) {
    results[r].stepMsMedian = median(times[r]);
    results[r].samplesPerSecond = 1000.0 * static_cast<double>(batch) / results[r].stepMsMedian;
  }
}

/// A count of bytes with an optional binary suffix ("256MiB", "1GiB", "4096").
int64_t parseBytes(const std::string &text, const char *flag) {
  int64_t bytes = runtime::parseByteCount(text);
  SINTER_CHECK(bytes > 0, Loc::current(),
               std::string("--") + flag +
                   " must be a positive number of bytes (optionally with KiB, MiB or GiB), got '" +
                   text + "'");
  return bytes;
}

/// Note [Memory report]: what holds memory at a planned step's peak, by kind
/// (inputs held before the step, results it allocates, the arena's tensors
/// and kernel workspace) and by the user's source line.
void printMemoryReport(const StepMemory &m, bool json) {
  if (json) {
    Json byLine = Json::array(), byCategory = Json::array();
    for (const StepMemory::Use &use : m.peak_by_line)
      byLine.push_back({{"line", use.line}, {"bytes", use.bytes}});
    for (const StepMemory::Category &category : m.peak_by_category)
      byCategory.push_back({{"category", category.name}, {"bytes", category.bytes}});
    printJson({{"inputs_bytes", m.persistent_bytes},
               {"result_bytes", m.result_bytes},
               {"arena_bytes", m.arena_bytes},
               {"peak_tensor_bytes", m.peak_tensor_bytes},
               {"peak_workspace_bytes", m.peak_workspace_bytes},
               {"recomputed_values", m.recomputed_values},
               {"recompute_operations", m.recompute_operations},
               {"pipeline_runs", m.pipeline_runs},
               {"memory_budget", m.memory_budget},
               {"over_budget_bytes", m.over_budget_bytes},
               {"by_line", byLine},
               {"by_category", byCategory}});
    return;
  }
  auto mib = [](int64_t bytes) { return static_cast<double>(bytes) / 1048576.0; };
  std::printf("memory at the step's peak:\n"
              "  %10.1f MiB  inputs (parameters, optimizer state, the batch), held before\n"
              "  %10.1f MiB  results copied out of the step (inputs or constants it "
              "returns)\n"
              "  %10.1f MiB  updates written into the inputs they replace (donated: "
              "no memory)\n"
              "  %10.1f MiB  arena tensors live at the peak (activations kept for the "
              "backward pass, gradients and other results, temporaries)\n"
              "  %10.1f MiB  kernel workspace live at the peak\n"
              "  %10.1f MiB  arena size (its buffers packed by liveness)\n"
              "by what it is in training (inputs, and arena at the peak and results):\n",
              mib(m.persistent_bytes), mib(m.result_bytes), mib(m.donated_bytes),
              mib(m.peak_tensor_bytes), mib(m.peak_workspace_bytes), mib(m.arena_bytes));
  for (const StepMemory::Category &category : m.peak_by_category)
    std::printf("  %10.1f MiB  %s\n", mib(category.bytes), category.name.c_str());
  std::printf("by source line (arena at the peak and results):\n");
  for (const StepMemory::Use &use : m.peak_by_line)
    std::printf("  %10.1f MiB  %s  (largest: %s)\n", mib(use.bytes), use.line.c_str(),
                use.example.c_str());
  std::printf("recomputed instead of kept: %lld values, %lld extra operations a step\n",
              static_cast<long long>(m.recomputed_values),
              static_cast<long long>(m.recompute_operations));
  std::printf("passes run to fit the memory budget: %lld time%s\n",
              static_cast<long long>(m.pipeline_runs), m.pipeline_runs == 1 ? "" : "s");
  if (m.over_budget_bytes > 0)
    std::printf("over the memory budget of %.1f MiB by %.1f MiB: the smallest plan found\n",
                mib(m.memory_budget), mib(m.over_budget_bytes));
}

/// A training step of `model` at `batch`, recorded and planned, not run: the
/// first, or with `steady` the one every later step runs (tools::enterSteadyState).
StepMemory planStep(const std::string &model, int64_t batch, int64_t length, double lr,
                    PlanOptions options, bool steady, bool keepGradients) {
  tools::ZooTask task = tools::makeZooTask(model, batch, length);
  optim::AdamW optimizer(task.model->parameters(), {.lr = lr});
  if (steady)
    tools::enterSteadyState(optimizer);
  recordStep(task, optimizer, keepGradients);
  return plan_step(options);
}

/// The loss and every parameter's gradient of one AdamW training step of
/// `model` at `batch` under `settings`, from the zoo's weights and batch.
std::vector<std::pair<std::string, std::vector<double>>> stepGradients(const std::string &model,
                                                                       int64_t batch,
                                                                       int64_t length, double lr,
                                                                       const Settings &settings) {
  Session::Use use(settings);
  tools::ZooTask task = tools::makeZooTask(model, batch, length);
  optim::AdamW optimizer(task.model->parameters(), {.lr = lr});
  Tensor loss = recordStep(task, optimizer, /*keepGradients=*/true);
  mark_step();
  std::vector<std::pair<std::string, std::vector<double>>> values = {
      {"loss", {loss.item<double>()}}};
  for (const auto &[name, p] : task.model->named_parameters())
    values.emplace_back("gradient of " + name, p.grad().to_vector<double>());
  return values;
}

/// --check-reference: one compiled training step (under the memory budget,
/// if any) against the reference executor, each value within 1e-3 of its
/// largest element (the loss within 1e-4 of itself), the tolerances of the
/// zoo tests (tests/unit/compiler/ZooStepsTest.cpp), compared by
/// compare_values (a NaN never passes). 0 when they agree, 1 when they
/// differ, 2 when the compiled step did not run compiled (a fallback to
/// the reference executor would compare the reference with itself).
int checkReference(const std::string &model, int64_t batch, int64_t length, double lr) {
  Settings compiled = Session::current().settings(), reference = compiled;
  compiled.compiler.enabled = true;
  reference.compiler.use_reference = true;
  Metrics before = metrics();
  Clock::time_point start = Clock::now();
  auto got = stepGradients(model, batch, length, lr, compiled);
  double compiledSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  Metrics after = metrics();
  int64_t steps = after.steps - before.steps,
          compiledSteps = after.compiled_steps - before.compiled_steps,
          fallbacks = after.fallbacks - before.fallbacks;
  if (steps == 0 || compiledSteps != steps || fallbacks != 0) {
    std::fprintf(stderr,
                 "sinter-bench: --check-reference refused: %lld of %lld steps ran compiled, %lld "
                 "fell back to the reference executor (%s); comparing the reference executor "
                 "with itself would prove nothing\n",
                 static_cast<long long>(compiledSteps), static_cast<long long>(steps),
                 static_cast<long long>(fallbacks),
                 after.fallback_reasons.empty() ? "no reason recorded"
                                                : after.fallback_reasons.back().c_str());
    return 2;
  }
  start = Clock::now();
  auto want = stepGradients(model, batch, length, lr, reference);
  double referenceSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  bool agree = got.size() == want.size();
  double worstRatio = 0;
  std::string worstName;
  for (size_t i = 0; agree && i < got.size(); ++i) {
    Tolerance tolerance = {.of_largest = i == 0 ? 1e-4 : 1e-3, .absolute = 1e-6};
    Comparison c = compare_values(got[i].first, got[i].second, want[i].second, tolerance);
    if (!c.ok) {
      std::printf("reference check: %s\n", c.message.c_str());
      agree = false;
    }
    if (c.worst_fraction > worstRatio)
      worstRatio = c.worst_fraction, worstName = got[i].first;
  }
  std::printf("reference check, %s batch %lld: loss %.6f compiled, %.6f reference; %zu "
              "gradients %s (closest to its tolerance: %s at %.2g of it); %.1f s compiled, "
              "%.1f s reference\n",
              model.c_str(), static_cast<long long>(batch), got[0].second[0], want[0].second[0],
              got.size() - 1, agree ? "agree" : "DIFFER", worstName.c_str(), worstRatio,
              compiledSeconds, referenceSeconds);
  return agree ? 0 : 1;
}

/// AdamW's learning rate: 1e-3, or scaled linearly from --scale-lr-from.
double learningRate(const std::string &flag, int64_t batch) {
  if (flag.empty())
    return 1e-3;
  size_t colon = flag.find(':');
  char *end = nullptr;
  long long nativeBatch = colon == std::string::npos ? 0 : std::strtoll(flag.c_str(), &end, 10);
  bool batchOk = colon != std::string::npos && end == flag.c_str() + colon && nativeBatch > 0;
  double nativeLr = batchOk ? std::strtod(flag.c_str() + colon + 1, &end) : 0;
  SINTER_CHECK(batchOk && *end == '\0' && end != flag.c_str() + colon + 1 && nativeLr > 0 &&
                   std::isfinite(nativeLr),
               Loc::current(),
               "--scale-lr-from must be NATIVE_BATCH:NATIVE_LR with a positive batch and "
               "learning rate, e.g. 32:1e-3; got '" +
                   flag + "'");
  const int64_t worldSize = 1; // one process until data parallelism exists
  double lr = nativeLr / static_cast<double>(nativeBatch) * static_cast<double>(batch) *
              static_cast<double>(worldSize);
  std::printf("learning rate: %g / %lld * %lld * %lld = %g\n", nativeLr, nativeBatch,
              static_cast<long long>(batch), static_cast<long long>(worldSize), lr);
  return lr;
}

/// --compile-only: the first step's CUDA kernels (those the CUDA renderer
/// writes yet) through NVRTC and ptxas for each architecture.
int compileOnly(const std::string &name, int64_t batch, int64_t length, const Options &flags) {
  std::vector<std::string> archs;
  {
    auto list = runtime::cudaArchitectureList(flags.arch);
    SINTER_CHECK(list.ok(), Loc::current(), "--arch: " + std::string(list.status().message()));
    for (const std::string &item : *list) {
      SINTER_CHECK(item.rfind("sm_", 0) == 0, Loc::current(),
                   "--arch: '" + item + "' is PTX; --compile-only reports cubins (sm_NN)");
      archs.push_back(item.substr(3));
    }
    SINTER_CHECK(!archs.empty(), Loc::current(), "--arch names no architecture");
  }
  const std::string ptxas = tools::findPtxas();
  SINTER_CHECK(!ptxas.empty(), Loc::current(),
               "--compile-only needs ptxas (the CUDA toolkit's; CUDA_HOME/bin, /usr/local/cuda/bin "
               "or PATH)");
  // The step is recorded on the CPU (its graph does not depend on the
  // device) and not run.
  Session::Use session({.compiler = {.use_reference = true}});
  tools::ZooTask task = tools::makeZooTask(name, batch, length);
  optim::AdamW optimizer(task.model->parameters());
  std::vector<lazy::NodePtr> outputs = tools::recordStep(task, &optimizer);
  compiler::CudaStepSource step;
  std::string error;
  SINTER_CHECK(compiler::renderCudaStep(outputs, step, error), Loc::current(),
               "the step did not compile: " + error);
  std::filesystem::path work =
      std::filesystem::temp_directory_path() / ("sinter-bench-cuda-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  constexpr long kThreads = 256; // every kernel the renderer writes (Note [The CUDA renderer])
  int problems = 0;
  const bool json = flags.json;
  for (const std::string &arch : archs) {
    StatusOr<std::string> ptx =
        cuda::compileWithNvrtc({.path = name + ".cu",
                                .source = step.source,
                                .arch = arch,
                                .output = cuda::NvrtcOutput::Ptx,
                                .includeDirs = {codegen::kernelsIncludeDir()}});
    SINTER_CHECK(ptx.ok(), Loc::current(), std::string(ptx.status().message()));
    std::string ptxPath = (work / ("step_sm" + arch + ".ptx")).string();
    std::ofstream(ptxPath) << *ptx;
    StatusOr<std::string> report = tools::assemble(
        ptxas, ptxPath, arch, (work / ("step_sm" + arch + ".cubin")).string(), true);
    SINTER_CHECK(report.ok(), Loc::current(), std::string(report.status().message()));
    std::vector<tools::KernelResources> kernels = tools::parsePtxasReport(*report);
    long most = 0, spills = 0;
    for (const tools::KernelResources &k : kernels) {
      std::string why = tools::resourceProblem(k, kThreads);
      problems += !why.empty();
      most = std::max(most, k.registers);
      spills += k.spillStores + k.spillLoads;
      if (json)
        printJson({{"model", name},
                   {"kernel", k.kernel},
                   {"arch", "sm_" + arch},
                   {"registers", k.registers},
                   {"spill_stores", k.spillStores},
                   {"spill_loads", k.spillLoads},
                   {"shared_bytes", k.sharedBytes},
                   {"threads", kThreads},
                   {"problem", why.empty() ? Json(nullptr) : Json(why)}});
      else if (!why.empty())
        std::printf("%s sm_%s: %s: %s (registers %ld, spills %ld/%ld, shared %ld bytes)\n",
                    name.c_str(), arch.c_str(), k.kernel.c_str(), why.c_str(), k.registers,
                    k.spillStores, k.spillLoads, k.sharedBytes);
    }
    if (json)
      printJson({{"model", name},
                 {"arch", "sm_" + arch},
                 {"kernels", step.kernels},
                 {"kernels_written", step.written.size()},
                 {"kernels_assembled", kernels.size()},
                 {"max_registers", most},
                 {"spill_bytes", spills}});
    else
      std::printf("%s batch %lld sm_%s: %zu of the step's %lld kernels written for CUDA and "
                  "assembled (%zu), at most %ld registers, %ld bytes of spills\n",
                  name.c_str(), static_cast<long long>(batch), arch.c_str(), step.written.size(),
                  static_cast<long long>(step.kernels), kernels.size(), most, spills);
    if (kernels.size() != step.written.size()) {
      std::fprintf(stderr, "sinter-bench: ptxas reported %zu kernels, the renderer wrote %zu\n",
                   kernels.size(), step.written.size());
      ++problems;
    }
  }
  std::filesystem::remove_all(work);
  return problems == 0 ? 0 : 1;
}

int run(const Options &flags) {
  const std::string &model = flags.model, &mode = flags.mode, &batchFlag = flags.batchSize;
  const int64_t length = flags.length, steps = flags.steps, warmup = flags.warmup;
  SINTER_CHECK(mode == "eager" || mode == "compiled" || mode == "both", Loc::current(),
               "--mode must be eager, compiled or both, got '" + mode + "'");
  SINTER_CHECK(steps > 0 && warmup >= 0, Loc::current(),
               "--steps must be positive and --warmup not negative");
  compiler::install();
  const Device device =
      !flags.device.empty() ? Device::parse(flags.device) : Settings::fromEnvironment().device;
  if (flags.compileOnly) {
    SINTER_CHECK(device.isCuda(), Loc::current(),
                 "--compile-only compiles a step's CUDA kernels: give --device cuda (the CPU's "
                 "kernels compile as a step runs)");
    char *end = nullptr;
    long long value = std::strtoll(batchFlag.c_str(), &end, 10);
    SINTER_CHECK(!batchFlag.empty() && *end == '\0' && value > 0, Loc::current(),
                 "--compile-only takes a positive --batch-size, got '" + batchFlag + "'");
    return compileOnly(model, value, length, flags);
  }
  const int64_t budget =
      flags.memoryBudget.empty() ? 0 : parseBytes(flags.memoryBudget, "memory-budget");
  // The tool's session: the environment's settings, with the budget of the
  // flag (compiled steps recompute to fit, Note [Rematerialization]).
  Settings settings = Settings::fromEnvironment();
  settings.device = device;
  if (budget > 0)
    settings.compiler.memory_budget = budget;
  Session::Use session(settings);
  int64_t batch = 0;
  if (batchFlag == "auto") {
    batch = tools::largestBatch(
        [&](int64_t b) {
          return planStep(model, b, length, 1e-3, {.build_kernels = false}, /*steady=*/true,
                          flags.keepGradients);
        },
        budget, "batch size auto");
  } else {
    char *end = nullptr;
    long long value = std::strtoll(batchFlag.c_str(), &end, 10);
    SINTER_CHECK(!batchFlag.empty() && *end == '\0' && value > 0, Loc::current(),
                 "--batch-size must be a positive number or auto, got '" + batchFlag + "'");
    batch = value;
  }
  const double lr = learningRate(flags.scaleLrFrom, batch);
  const Json chosen = batchFlag == "auto" ? Json(batch) : Json(nullptr);
  if (!flags.dumpWeights.empty())
    dumpWeights(tools::makeZooTask(model, batch, length), flags.dumpWeights);
  const char *threadsEnv = std::getenv("OMP_NUM_THREADS");
  std::string threads = threadsEnv != nullptr ? threadsEnv : "all";
  if (flags.planOnly || flags.memoryReport) {
    StepMemory planned =
        planStep(model, batch, length, lr, {}, /*steady=*/false, flags.keepGradients);
    if (flags.json)
      printJson({{"model", model},
                 {"batch_size", batch},
                 {"length", length},
                 {"planned_peak_bytes", planned.planned_peak_bytes},
                 {"arena_bytes", planned.arena_bytes},
                 {"result_bytes", planned.result_bytes},
                 {"persistent_bytes", planned.persistent_bytes},
                 {"memory_budget", planned.memory_budget},
                 {"over_budget_bytes", planned.over_budget_bytes},
                 {"chosen_batch_size", chosen}});
    else
      std::printf("%s batch %lld: the first step needs %.1f MiB while it runs (arena %.1f MiB, "
                  "results %.1f MiB) on top of %.1f MiB of inputs (parameters, batch)\n",
                  model.c_str(), static_cast<long long>(batch),
                  planned.planned_peak_bytes / 1048576.0, planned.arena_bytes / 1048576.0,
                  planned.result_bytes / 1048576.0, planned.persistent_bytes / 1048576.0);
    if (flags.memoryReport)
      printMemoryReport(planned, flags.json);
    return 0;
  }
  std::vector<Run> runs;
  std::vector<Result> results;
  runtime::CoreShare &share = runtime::CoreShare::get();
  runtime::CoreShare::Tally before = share.tally();
  for (const char *m : {"eager", "compiled"})
    if (mode == "both" || mode == m) {
      int64_t heldBefore = runtime::HostAllocator::get().stats().in_use;
      Settings inMode = settings;
      inMode.compiler.enabled = std::string(m) == "compiled";
      Run run{m, Session(inMode), tools::makeZooTask(model, batch, length), nullptr,
              flags.keepGradients};
      run.optimizer = std::make_unique<optim::AdamW>(run.task.model->parameters(),
                                                     optim::AdamWOptions{.lr = lr});
      results.push_back(bench(run, batch, steps, warmup, heldBefore));
      runs.push_back(std::move(run));
    }
  if (runs.size() == 2)
    timeInterleaved(runs, results, batch, steps);
  std::optional<std::string> busy = share.busyNote(before, share.tally());
  for (const Result &r : results) {
    if (flags.json) {
      // Numbers to the precision they are measured to; a NaN loss is null.
      auto rounded = [](double value, double per) { return std::round(value * per) / per; };
      char *end = nullptr;
      long long count = threads == "all" ? 0 : std::strtoll(threads.c_str(), &end, 10);
      Json threadCount = threads == "all"              ? Json(nullptr)
                         : end != nullptr && *end == 0 ? Json(count)
                                                       : Json(threads);
      printJson(
          {{"model", model},
           {"mode", r.mode},
           {"batch_size", batch},
           {"length", length},
           {"threads", threadCount},
           {"steps", steps},
           {"step_ms_median", rounded(r.stepMsMedian, 1e3)},
           {"samples_per_s", rounded(r.samplesPerSecond, 1e2)},
           {"peak_bytes", r.peakBytes},
           {"kernels_per_step", rounded(r.kernelsPerStep, 10)},
           {"compile_s", rounded(r.compileSeconds, 1e3)},
           {"fallbacks", r.fallbacks},
           {"first_loss", r.firstLoss},
           {"last_loss", r.lastLoss},
           {"planned_peak_bytes", orNull(r.memory, &StepMemory::planned_peak_bytes)},
           {"measured_peak_bytes", orNull(r.memory, &StepMemory::measured_peak_bytes)},
           {"persistent_bytes", orNull(r.memory, &StepMemory::persistent_bytes)},
           {"pipeline_runs", orNull(r.memory, &StepMemory::pipeline_runs)},
           {"memory_budget", orNull(r.memory, &StepMemory::memory_budget)},
           {"over_budget_bytes", orNull(r.memory, &StepMemory::over_budget_bytes)},
           {"bytes_to_device_per_step", r.traffic ? Json(r.traffic->toDevice) : Json(nullptr)},
           {"bytes_to_host_per_step", r.traffic ? Json(r.traffic->toHost) : Json(nullptr)},
           {"chosen_batch_size", chosen},
           {"machine_busy", busy.has_value()}});
    } else {
      std::printf("%-9s %s batch %lld, threads %s: median step %.2f ms, %.1f samples/s, peak "
                  "%.1f MiB, %.1f kernels/step, compile %.2f s, %lld fallbacks, loss %.4f -> "
                  "%.4f\n",
                  r.mode.c_str(), model.c_str(), static_cast<long long>(batch), threads.c_str(),
                  r.stepMsMedian, r.samplesPerSecond, r.peakBytes / 1048576.0, r.kernelsPerStep,
                  r.compileSeconds, static_cast<long long>(r.fallbacks), r.firstLoss, r.lastLoss);
      if (r.traffic)
        std::printf("          copies per step: %lld bytes to %s, %lld bytes back\n",
                    static_cast<long long>(r.traffic->toDevice), device.toString().c_str(),
                    static_cast<long long>(r.traffic->toHost));
      // A CUDA device's memory is the executable's, which the host's
      // allocator does not see: planned only.
      if (r.memory && device.isCuda())
        std::printf("          step memory on %s: planned %lld bytes, inputs %lld\n",
                    device.toString().c_str(), static_cast<long long>(r.memory->planned_peak_bytes),
                    static_cast<long long>(r.memory->persistent_bytes));
      else if (r.memory)
        std::printf("          step memory: planned %lld bytes, measured %lld, inputs %lld\n",
                    static_cast<long long>(r.memory->planned_peak_bytes),
                    static_cast<long long>(r.memory->measured_peak_bytes),
                    static_cast<long long>(r.memory->persistent_bytes));
    }
  }
  if (results.size() == 2 && !flags.json)
    std::printf("compiled is %.2fx faster than eager\n",
                results[0].stepMsMedian / results[1].stepMsMedian);
  if (busy && !flags.json)
    std::printf("(%s)\n", busy->c_str());
  if (flags.checkReference)
    return checkReference(model, batch, length, lr);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Measures training steps of a zoo model, eager and compiled.", "sinter-bench"};
  // As the Abseil flags these were: each also with underscores.
  sinter::tools::lastValueWinsAndDefaultsShown(app);
  Options flags;
  app.add_option("--model", flags.model,
                 "mlp, lenet, resnet18, gpt-mini, bert-mini, gpt2 or bert-base");
  app.add_option("--batch-size,--batch_size", flags.batchSize,
                 "samples per step, or auto: the largest whose planned step memory fits the "
                 "budget");
  app.add_option("--memory-budget,--memory_budget", flags.memoryBudget,
                 "bytes (suffixes KiB, MiB, GiB) the step may allocate beyond its inputs: the "
                 "compiler recomputes values instead of keeping them to fit, and --batch-size "
                 "auto picks the largest batch within it; default: no budget (auto: the "
                 "machine's available memory for the step and its inputs)");
  app.add_option("--scale-lr-from,--scale_lr_from", flags.scaleLrFrom,
                 "NATIVE_BATCH:NATIVE_LR: scale AdamW's learning rate linearly to the batch size "
                 "(lr = NATIVE_LR / NATIVE_BATCH * batch * world size)");
  app.add_option("--length", flags.length, "tokens per sample (gpt-mini, bert-mini)");
  app.add_option("--steps", flags.steps, "timed steps per mode (the median is reported)");
  app.add_option("--warmup", flags.warmup, "untimed steps first (they include compilation)");
  app.add_option("--mode", flags.mode, "eager, compiled or both");
  app.add_option("--threads", flags.threads,
                 "threads for kernels (OpenMP and oneDNN); 0 keeps OMP_NUM_THREADS or every core");
  app.add_flag("--json", flags.json, "print one JSON object per mode instead of a table");
  app.add_flag("--plan-only,--plan_only", flags.planOnly,
               "compile the first training step and print its planned memory without running it");
  app.add_flag("--memory-report,--memory_report", flags.memoryReport,
               "print what holds memory at the first step's peak, by kind and by source line, "
               "from its plan (nothing runs)");
  app.add_flag("--check-reference,--check_reference", flags.checkReference,
               "then run one training step, keeping its gradients, compiled (with the memory "
               "budget) and on the reference executor from the same weights and batch, and "
               "compare the loss and every gradient (exit status 1 when they differ)");
  app.add_flag("--keep-gradients,--keep_gradients", flags.keepGradients,
               "keep every parameter's gradient after the step, as a loop that calls zero_grad() "
               "before the forward pass does; by default the step clears them after the update "
               "(zero_grad() before mark_step()), so it returns none and frees each as soon as "
               "its parameter is updated");
  app.add_option("--device", flags.device,
                 "where the steps run: cpu, cuda or cuda:N (empty: SINTER_DEVICE, else cpu)");
  app.add_flag("--compile-only,--compile_only", flags.compileOnly,
               "with --device cuda: compile the first training step's CUDA kernels with NVRTC "
               "and ptxas for each --arch and print each kernel's registers, spills and shared "
               "memory (exit status 1 when one spills or exceeds a limit); nothing runs, no GPU "
               "needed");
  app.add_option("--arch", flags.arch, "--compile-only: the GPU architectures");
  app.add_option("--dump-weights,--dump_weights", flags.dumpWeights,
                 "write the initial parameters and the batch to this folder (raw little-endian "
                 "files and a manifest) for benchmarks/torch_baseline.py, then benchmark as usual");
  return sinter::tools::toolMain(app, argc, argv, [&] {
    // Before any kernel library loads OpenMP, which reads it once.
    SINTER_CHECK(flags.threads >= 0, sinter::Loc::current(), "--threads must not be negative");
    if (flags.threads > 0)
      setenv("OMP_NUM_THREADS", std::to_string(flags.threads).c_str(), 1);
    return run(flags);
  });
}
