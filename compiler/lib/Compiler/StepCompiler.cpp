//===- StepCompiler.cpp - mark_step's compiler for the CPU -----------------===//
//
// Two caches of loaded executables: whole steps keyed by their graph
// structure, and eager mode's one-op programs keyed by the op's signature
// (the structure of the op over data operands). Values cross into programs
// without a copy: an argument is read where its value's bytes are (see Note
// [Two forms of a value] in sinter/lazy/Node.h), and each result is written
// straight into a fresh buffer from the caching allocator, which becomes the
// result's value.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/StepCompiler.h"

#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Compiler.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/Artifact.h"
#include "sinter/runtime/ByteCount.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Environment.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

namespace sinter::compiler {
namespace {

using ValuePtr = std::shared_ptr<const lazy::Value>;

/// The kind of device the graph's tensors live on (the first's; unsupported
/// refuses a graph on several).
runtime::DeviceKind deviceOf(const std::vector<const lazy::Node *> &order) {
  return order.empty() ? runtime::DeviceKind::Cpu : order.front()->device.kind();
}

/// Why the graph cannot be compiled, or "": tensors on two devices, a
/// device this build has no target for. (Every dtype compiles: f16 and bf16
/// as Note [Half precision in f32] in LowerLazyGraph.cpp says.)
std::string unsupported(const std::vector<const lazy::Node *> &order) {
  for (const lazy::Node *node : order) {
    if (node->device != order.front()->device)
      return "the step's tensors are on " + order.front()->device.toString() + " and " +
             node->device.toString() + "; move them to one device";
  }
  StatusOr<const codegen::Target *> target = codegen::targetFor(deviceOf(order));
  return target.ok() ? "" : std::string(target.status().message());
}

/// The target the graph is compiled for (Note [Choosing the target]): its
/// device's, with CPU kernels built for `config.cpu`. After unsupported()
/// said "".
const codegen::Target &targetOf(const std::vector<const lazy::Node *> &order,
                                const CompilerConfig &config) {
  return **codegen::targetFor(deviceOf(order), config.cpu);
}

/// Marks every matrix product of `program` as allowed TF32
/// (runtime::Gemm::tf32) when `config` allows it and `target` is a GPU's.
void allowTf32(runtime::Program &program, const codegen::Target &target,
               const CompilerConfig &config) {
  if (!config.allow_tf32 || target.description().device != runtime::DeviceKind::Cuda)
    return;
  for (runtime::Program::Step &step : program.steps)
    if (step.kind == runtime::Program::Step::Kind::Gemm)
      step.gemm.tf32 = true;
}

DebugOptions debugOptions(const CompilerConfig &config, const std::string &tag) {
  return {.level = config.debug, .dumpDir = config.dump_dir, .tag = tag};
}

void add(StepMetrics &step, const StepBuild &build) {
  ++step.compilations;
  step.disk_cache_hits += build.cacheHit;
  step.compile += build.times;
}

/// The memory `executable` takes to run (Note [Step memory] in
/// sinter/Metrics.h): its arena and its results in the size classes of its
/// target's allocator, as the executable and execute() allocate them.
StepMemory plannedMemory(const runtime::Program &program, const codegen::Target &target,
                         const std::vector<const lazy::Value *> &arguments, int64_t budget) {
  using runtime::HostAllocator;
  StepMemory memory;
  runtime::Allocation allocation = runtime::allocationOf(
      program, [&target](int64_t bytes) { return target.allocationSize(bytes); });
  memory.arena_bytes = allocation.arena;
  memory.result_bytes = allocation.results;
  memory.planned_peak_bytes = memory.arena_bytes + memory.result_bytes;
  for (size_t r = 0; r < program.results.size(); ++r)
    if (program.donors[r] >= 0)
      memory.donated_bytes += target.allocationSize(program.buffers[program.results[r]].bytes);
  memory.peak_workspace_bytes = program.report.peakWorkspaceBytes;
  memory.peak_tensor_bytes = program.report.peakTensorBytes;
  memory.recomputed_values = program.report.recomputedValues;
  memory.recompute_operations = program.report.recomputeOperations;
  memory.pipeline_runs = program.report.pipelineRuns;
  memory.estimated_arena_bytes = program.report.estimatedArenaBytes;
  memory.memory_budget = budget;
  if (budget > 0)
    memory.over_budget_bytes = std::max<int64_t>(0, memory.planned_peak_bytes - budget);
  for (const runtime::Program::Report::PeakUse &use : program.report.peakUses)
    memory.peak_by_line.push_back({use.line, use.example, use.bytes});
  for (const runtime::Program::Report::Category &category : program.report.peakCategories)
    memory.peak_by_category.push_back({category.name, category.bytes});
  for (const lazy::Value *argument : arguments)
    memory.persistent_bytes +=
        HostAllocator::size_class(argument->size() * elementSize(argument->dtype()));
  return memory;
}

/// Note [Out of memory before running]
/// A compiled step's memory is known before it runs (Note [Step memory]), so
/// a step that cannot fit is refused before anything is allocated or run,
/// with the bytes needed and available and what holds memory at the peak by
/// source line. Available: CompilerConfig::memory_limit (SINTER_MEMORY_LIMIT:
/// bytes, or with KiB/MiB/GiB; a cap on all of Sinter's host memory, for a
/// process that shares the machine) less what Sinter's allocator holds now, or else the memory the
/// system has available plus the allocator's cached free blocks.
struct Available {
  int64_t bytes = 0;
  const char *source = "";
};

/// What a step on `cuda` (null: the host) can have: under the memory limit,
/// else the host's or the CUDA device's free memory and cached blocks.
Available availableMemory(const CompilerConfig &config, runtime::CudaDevice *cuda) {
  runtime::HostAllocator::Stats stats = runtime::HostAllocator::get().stats();
  if (config.memory_limit > 0)
    return {std::max<int64_t>(0, config.memory_limit - (cuda ? 0 : stats.in_use)),
            "under the memory limit (CompilerConfig::memory_limit, SINTER_MEMORY_LIMIT)"};
  if (cuda != nullptr) {
    int64_t bytes = cuda->availableBytes();
    return {bytes < 0 ? std::numeric_limits<int64_t>::max() : bytes, "on the CUDA device"};
  }
  return {runtime::HostAllocator::system_available() + stats.cached, "in the system"};
}

/// What a step over its memory budget is told (Note [Fitting a memory
/// budget] in Pipeline.cpp): the budget, the smallest plan found, the
/// excess, and what the compiler traded for it.
std::string overBudget(const StepMemory &memory) {
  return "the step's smallest plan needs " + runtime::formatByteCount(memory.planned_peak_bytes) +
         " while it runs, " + runtime::formatByteCount(memory.over_budget_bytes) +
         " over the memory budget of " + runtime::formatByteCount(memory.memory_budget) +
         " (CompilerConfig::memory_budget, SINTER_MEMORY_BUDGET; " +
         std::to_string(memory.recomputed_values) + " values recomputed to come near it)";
}

/// The out-of-memory message for a step that needs `memory`.
std::string outOfMemory(const runtime::Program &program, const StepMemory &memory,
                        const Available &available) {
  std::string text = "the step needs " + runtime::formatByteCount(memory.planned_peak_bytes) +
                     " while it runs (arena " + runtime::formatByteCount(memory.arena_bytes) +
                     ", results " + runtime::formatByteCount(memory.result_bytes) + ") but " +
                     runtime::formatByteCount(available.bytes) + " are available " +
                     available.source + "; nothing was run. At the step's peak:";
  size_t shown = 0;
  for (const runtime::Program::Report::PeakUse &use : program.report.peakUses) {
    if (shown++ == 5)
      break;
    text += "\n  " + runtime::formatByteCount(use.bytes) + "  " + use.line;
    if (!use.example.empty() && use.example != use.line)
      text += " (" + use.example + ")";
  }
  return text;
}

/// A Program loaded for its target's device: the CPU's executable, or a
/// CUDA executable on cuda:`ordinal` (Notes [The CUDA device interface] and
/// [Choosing a CUDA device] in sinter/runtime/CudaExecutable.h), which runs
/// on values in the device's memory (executeOnDevice).
class Loaded {
public:
  static StatusOr<std::unique_ptr<Loaded>> load(runtime::Program program,
                                                const codegen::Target &target, int ordinal) {
    auto loaded = std::make_unique<Loaded>();
    if (target.description().device == runtime::DeviceKind::Cuda) {
      StatusOr<runtime::CudaDevice *> device = runtime::cudaDevice(ordinal);
      if (!device.ok())
        return device.status();
      auto cuda = runtime::CudaExecutable::load(std::move(program), **device);
      if (!cuda.ok())
        return cuda.status();
      loaded->cuda_ = std::move(*cuda);
    } else {
      auto cpu = runtime::CpuExecutable::load(std::move(program));
      if (!cpu.ok())
        return cpu.status();
      loaded->cpu_ = std::move(*cpu);
    }
    return loaded;
  }
  const runtime::Program &program() const { return cpu_ ? cpu_->program() : cuda_->program(); }
  int64_t argumentBytes(size_t i) const {
    return cpu_ ? cpu_->argumentBytes(i) : cuda_->argumentBytes(i);
  }
  int64_t resultBytes(size_t i) const {
    return cpu_ ? cpu_->resultBytes(i) : cuda_->resultBytes(i);
  }
  bool resultInArena(size_t i) const { return cpu_ && cpu_->resultInArena(i); }
  /// The CUDA device it runs on; null on the host.
  runtime::CudaDevice *cudaDevice() const { return cuda_ ? &cuda_->cudaDevice() : nullptr; }
  /// On the host: `in` and `out` are host memory.
  Status run(const std::vector<const void *> &in, std::vector<void *> &out,
             const runtime::RunOptions &options) {
    return cpu_->run(in, out, options);
  }
  /// On the CUDA device: `in` and `out` are its memory.
  Status runOnDevice(const std::vector<const void *> &in, const std::vector<void *> &out,
                     const runtime::RunOptions &options) {
    // Session refuses the combination; a step compiler called directly too.
    if (options.checkNumerics > 0)
      return absl::FailedPreconditionError(
          "check_numerics is not available for steps on a CUDA device yet");
    return cuda_->runOnDevice(in, out);
  }

private:
  std::unique_ptr<runtime::CpuExecutable> cpu_;
  std::unique_ptr<runtime::CudaExecutable> cuda_;
};

/// execute() on a CUDA device: the arguments' values in its memory (copied
/// there by the first step that reads them), the results made there (Note
/// [Two forms of a value]); a donated result is written into its
/// argument's memory. `measured`: the arena and the results in the
/// device's granularity. A run that fails after it may have written over a
/// donated argument sets `inputsOverwritten`.
bool executeOnDevice(Loaded &executable, runtime::CudaDevice &device,
                     const std::vector<const lazy::Value *> &arguments,
                     const std::vector<const lazy::Node *> &results, std::vector<ValuePtr> &values,
                     int64_t &measured, std::string &why, int checkNumerics,
                     bool &inputsOverwritten) {
  int64_t granularity = std::max<int64_t>(device.device().granularity, 1);
  auto granular = [granularity](int64_t bytes) {
    return bytes <= 0 ? 0 : (bytes + granularity - 1) / granularity * granularity;
  };
  std::vector<lazy::Value::DeviceBytes> in;
  std::vector<const void *> inAt;
  for (size_t i = 0; i < arguments.size(); ++i) {
    in.push_back(arguments[i]->onDevice(device, why));
    if (in.back() == nullptr) {
      why = "argument " + std::to_string(i) + ": " + why;
      return false;
    }
    inAt.push_back(in.back().get());
  }
  const runtime::Program &program = executable.program();
  measured = granular(program.arenaBytes);
  std::vector<lazy::Value::DeviceBytes> out;
  std::vector<void *> outAt;
  for (size_t r = 0; r < results.size(); ++r) {
    if (int donor = program.donors[r]; donor >= 0) {
      out.push_back(in[donor]);
    } else {
      out.push_back(lazy::Value::allocateOn(device, executable.resultBytes(r), why));
      if (out.back() == nullptr)
        return false;
      measured += granular(executable.resultBytes(r));
    }
    outAt.push_back(out.back().get());
  }
  if (Status status = executable.runOnDevice(inAt, outAt, {.checkNumerics = checkNumerics});
      !status.ok()) {
    why = std::string(status.message());
    inputsOverwritten = program.writesIntoArguments();
    return false;
  }
  values.clear();
  for (size_t r = 0; r < results.size(); ++r)
    values.push_back(std::make_shared<lazy::Value>(device, std::move(out[r]),
                                                   numel(results[r]->shape), results[r]->dtype));
  return true;
}

/// Runs `executable` on `arguments`; `results` describe its results (shape
/// and dtype), whose values are returned in `values`. `measured` is what the
/// run allocated at its peak (the arena and the results). With
/// `checkNumerics`, a NaN a kernel writes stops the run and sets `nonFinite`
/// (Note [Checked numerics] in sinter/runtime/Program.h).
bool execute(Loaded &executable, const std::vector<const lazy::Value *> &arguments,
             const std::vector<const lazy::Node *> &results, std::vector<ValuePtr> &values,
             int64_t &measured, std::string &why, runtime::Communicator *communicator,
             int checkNumerics, bool &nonFinite, bool &inputsOverwritten, bool checkInputs = true) {
  std::vector<const void *> in;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const lazy::Value &value = *arguments[i];
    int64_t bytes = value.size() * static_cast<int64_t>(elementSize(value.dtype()));
    if (bytes != executable.argumentBytes(i)) {
      why = "argument " + std::to_string(i) + " has " + std::to_string(bytes) +
            " bytes, the program expects " + std::to_string(executable.argumentBytes(i));
      return false;
    }
  }
  if (runtime::CudaDevice *device = executable.cudaDevice())
    return executeOnDevice(executable, *device, arguments, results, values, measured, why,
                           checkNumerics, inputsOverwritten);
  for (const lazy::Value *value : arguments)
    in.push_back(value->bytes());
  runtime::HostAllocator &allocator = runtime::HostAllocator::get();
  allocator.reset_window();
  int64_t before = allocator.stats().in_use;
  std::vector<lazy::Value::Bytes> buffers;
  std::vector<void *> out;
  const std::vector<int> &donors = executable.program().donors;
  for (size_t i = 0; i < results.size(); ++i) {
    // A donated result is written into its argument's memory (Note
    // [Donation]), which nothing outside the step holds; one in the arena
    // is handed out by the run (Note [Results in the arena]).
    buffers.push_back(donors[i] >= 0 ? arguments[donors[i]]->sharedBytes()
                      : executable.resultInArena(i)
                          ? nullptr
                          : lazy::Value::allocate(executable.resultBytes(i)));
    out.push_back(buffers.back().get());
  }
  absl::Status status = executable.run(
      in, out,
      {.checkNumerics = checkNumerics, .checkInputs = checkInputs, .communicator = communicator});
  if (!status.ok()) {
    why = std::string(status.message());
    nonFinite = absl::IsOutOfRange(status);
    inputsOverwritten = executable.program().writesIntoArguments();
    return false;
  }
  for (size_t i = 0; i < results.size(); ++i)
    if (executable.resultInArena(i))
      buffers[i] = lazy::Value::adopt(out[i]);
  measured = allocator.stats().window_peak - before;
  values.clear();
  for (size_t i = 0; i < results.size(); ++i)
    values.push_back(std::make_shared<lazy::Value>(std::move(buffers[i]), numel(results[i]->shape),
                                                   results[i]->dtype));
  return true;
}

/// One op over data operands (one per distinct operand, in first-use order,
/// which is the order of the program's arguments): the op's signature.
struct OneOp {
  lazy::NodePtr node;
  std::vector<const lazy::Node *> operands;
};

OneOp oneOp(const lazy::Node &node) {
  OneOp one;
  auto copy = std::make_shared<lazy::Node>();
  copy->op = node.op;
  copy->attrs = node.attrs;
  copy->shape = node.shape;
  copy->dtype = node.dtype;
  copy->device = node.device;
  copy->loc = node.loc;
  std::vector<lazy::NodePtr> data;
  for (const lazy::NodePtr &operand : node.operands) {
    size_t k = 0;
    while (k < one.operands.size() && one.operands[k] != operand.get())
      ++k;
    if (k == one.operands.size()) {
      auto d = std::make_shared<lazy::Node>();
      d->shape = operand->shape;
      d->dtype = operand->dtype;
      d->device = operand->device;
      d->loc = operand->loc;
      data.push_back(d);
      one.operands.push_back(operand.get());
    }
    copy->operands.push_back(data[k]);
  }
  one.node = std::move(copy);
  return one;
}

class CpuStepCompiler : public detail::StepCompiler {
public:
  bool run(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
           const CompilerConfig &config, const std::vector<const lazy::Node *> &donatable,
           runtime::Communicator *communicator, std::vector<ValuePtr> &values, StepMetrics &step,
           std::string &why) override {
    std::vector<const lazy::Value *> arguments;
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const lazy::Node *> order = lazy::topological_order(outputs);
    const CompiledStep *compiled =
        compiledStep(outputs, order, structure, config, donatable, arguments, step, why);
    if (compiled == nullptr)
      return false;
    std::vector<const lazy::Node *> results;
    for (const lazy::NodePtr &output : outputs)
      results.push_back(output.get());
    const Loaded &executable = *compiled->executable;
    step.kernels_launched += static_cast<int64_t>(runtime::launchesOf(executable.program()).size());
    step.memory = compiled->memory;
    if (config.memory_budget_hard && step.memory.over_budget_bytes > 0) {
      why = overBudget(step.memory) + "; memory_budget_hard refuses it: raise the budget, or "
                                      "make the step smaller (a smaller batch)";
      step.out_of_memory = true;
      return false;
    }
    if (Available available = availableMemory(config, executable.cudaDevice());
        step.memory.planned_peak_bytes > available.bytes) {
      why = outOfMemory(executable.program(), step.memory, available);
      step.out_of_memory = true;
      return false;
    }
    return execute(*compiled->executable, arguments, results, values,
                   step.memory.measured_peak_bytes, why, communicator, config.check_numerics,
                   step.non_finite, step.inputs_overwritten);
  }

  bool plan(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
            const CompilerConfig &config, const std::vector<const lazy::Node *> &donatable,
            bool buildKernels, StepMemory &memory, StepMetrics &step, std::string &why) override {
    std::vector<const lazy::Value *> arguments;
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const lazy::Node *> order = lazy::topological_order(outputs);
    std::vector<bool> mask = donationMask(order, donatable);
    if (buildKernels || steps_.count(cacheKey(structure, mask, config))) {
      const CompiledStep *compiled =
          compiledStep(outputs, order, structure, config, donatable, arguments, step, why);
      if (compiled == nullptr)
        return false;
      memory = compiled->memory;
      return true;
    }
    if (!argumentsOf(order, arguments, why))
      return false;
    runtime::Program program;
    StepBuild build;
    if (!planStep(outputs, targetOf(order, config), program, build, why, &mask,
                  config.memory_budget))
      return false;
    step.compile += build.times;
    memory = plannedMemory(program, targetOf(order, config), arguments, config.memory_budget);
    return true;
  }

  bool export_step(const std::vector<lazy::NodePtr> &outputs, const CompilerConfig &config,
                   const std::vector<const lazy::Node *> &donatable, runtime::Program &program,
                   std::string &source, std::string &why) override {
    std::vector<const lazy::Node *> order = lazy::topological_order(outputs);
    why = unsupported(order);
    if (!why.empty())
      return false;
    std::vector<std::vector<bool>> perGraph = {donationMask(order, donatable)};
    std::vector<runtime::Program> programs;
    StepBuild build;
    if (!compileGraphs({outputs}, targetOf(order, config), programs, build, why,
                       debugOptions(config, "export"), &perGraph, config.memory_budget))
      return false;
    program = std::move(programs.front());
    allowTf32(program, targetOf(order, config), config);
    source = std::move(build.source);
    return true;
  }

  bool build_cuda_module(const std::string &source, const std::string &arch, std::string &path,
                         std::string &why) override {
    int number = runtime::cudaArchitectureNumber(arch);
    if (number == 0) {
      why = "'" + arch + "' is not sm_NN or compute_NN";
      return false;
    }
    codegen::CompiledLibrary module;
    if (!codegen::compileCudaModule(source, number, module, why, arch.starts_with("compute_")))
      return false;
    path = module.path;
    return true;
  }

  std::vector<std::pair<std::string, std::string>> kernel_library_dependencies() const override {
    return codegen::kernelLibraryDependencies();
  }

  bool run_eager(const std::vector<lazy::NodePtr> &outputs, const CompilerConfig &config,
                 runtime::Communicator *communicator, std::vector<ValuePtr> &values,
                 StepMetrics &step, std::string &why) override {
    std::vector<const lazy::Node *> order = lazy::topological_order(outputs);
    why = unsupported(order);
    if (!why.empty())
      return false;
    // Each op's signature; the ops not seen before are compiled together.
    std::vector<OneOp> ops(order.size());
    std::vector<uint64_t> signatures(order.size());
    std::unordered_map<const lazy::Node *, int> uses;
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::vector<lazy::NodePtr>> missing;
    std::vector<uint64_t> missingSignatures;
    for (size_t k = 0; k < order.size(); ++k) {
      if (order[k]->op == lazy::Op::Data)
        continue;
      ops[k] = oneOp(*order[k]);
      signatures[k] = withConfig(lazy::structural_hash({ops[k].node}), config);
      for (const lazy::Node *operand : ops[k].operands)
        ++uses[operand];
      if (!eager_.count(signatures[k]) &&
          std::find(missingSignatures.begin(), missingSignatures.end(), signatures[k]) ==
              missingSignatures.end()) {
        missing.push_back({ops[k].node});
        missingSignatures.push_back(signatures[k]);
      }
    }
    if (!missing.empty()) {
      std::vector<std::unique_ptr<Loaded>> executables =
          compileAll(missing, targetOf(order, config), config,
                     debugOptions(config, "eager-" + std::to_string(eager_.size())), step, why);
      if (executables.empty())
        return false;
      for (size_t i = 0; i < missing.size(); ++i)
        eager_.emplace(missingSignatures[i], std::move(executables[i]));
    }
    for (const lazy::NodePtr &output : outputs)
      ++uses[output.get()];

    // Run op by op; a value is dropped (its buffer back to the allocator's
    // cache) after its last use, as in eager PyTorch.
    std::unordered_map<const lazy::Node *, ValuePtr> computed;
    std::vector<const lazy::Value *> arguments;
    std::vector<ValuePtr> result;
    for (size_t k = 0; k < order.size(); ++k) {
      const lazy::Node *node = order[k];
      if (node->op == lazy::Op::Data)
        continue;
      arguments.clear();
      for (const lazy::Node *operand : ops[k].operands)
        arguments.push_back(operand->op == lazy::Op::Data ? operand->value.get()
                                                          : computed.at(operand).get());
      Loaded &executable = *eager_.at(signatures[k]);
      step.kernels_launched +=
          static_cast<int64_t>(runtime::launchesOf(executable.program()).size());
      int64_t measured = 0; // eager steps have no plan to compare with
      // Only the step's data need checking: the other operands are results
      // of earlier ops, checked when they were written.
      bool fromData = std::any_of(ops[k].operands.begin(), ops[k].operands.end(),
                                  [](const lazy::Node *n) { return n->op == lazy::Op::Data; });
      if (!execute(executable, arguments, {node}, result, measured, why, communicator,
                   config.check_numerics, step.non_finite, step.inputs_overwritten, fromData))
        return false;
      computed[node] = std::move(result.front());
      for (const lazy::Node *operand : ops[k].operands)
        if (--uses[operand] == 0)
          computed.erase(operand);
    }
    values.clear();
    for (const lazy::NodePtr &output : outputs)
      values.push_back(output->op == lazy::Op::Data ? output->value : computed.at(output.get()));
    return true;
  }

private:
  /// A compiled step and its memory (Note [Step memory]), which depends on
  /// the program and its arguments' sizes alone: computed once, when compiled.
  struct CompiledStep {
    std::unique_ptr<Loaded> executable;
    StepMemory memory;
  };

  /// The compiled program of `outputs` (whose graph is `order`; from the
  /// cache, or compiled now) and its arguments' values; null with the reason
  /// in `why`.
  const CompiledStep *compiledStep(const std::vector<lazy::NodePtr> &outputs,
                                   const std::vector<const lazy::Node *> &order, uint64_t structure,
                                   const CompilerConfig &config,
                                   const std::vector<const lazy::Node *> &donatable,
                                   std::vector<const lazy::Value *> &arguments, StepMetrics &step,
                                   std::string &why) {
    if (!argumentsOf(order, arguments, why))
      return nullptr;
    std::vector<bool> mask = donationMask(order, donatable);
    uint64_t key = cacheKey(structure, mask, config);
    auto found = steps_.find(key);
    if (found == steps_.end()) {
      char tag[32];
      std::snprintf(tag, sizeof tag, "step-%016llx", static_cast<unsigned long long>(key));
      const codegen::Target &target = targetOf(order, config);
      std::unique_ptr<Loaded> executable =
          compile({outputs}, target, config, debugOptions(config, tag), step, why, mask);
      if (!executable)
        return nullptr;
      StepMemory memory =
          plannedMemory(executable->program(), target, arguments, config.memory_budget);
      if (memory.over_budget_bytes > 0 && !config.memory_budget_hard)
        std::fprintf(stderr,
                     "sinter: warning: %s; it runs over the budget "
                     "(CompilerConfig::memory_budget_hard refuses it instead)\n",
                     overBudget(memory).c_str());
      found = steps_.emplace(key, CompiledStep{std::move(executable), std::move(memory)}).first;
    }
    return &found->second;
  }

  /// The values of the graph's data nodes (the program's arguments, in
  /// `order`), or false with the reason the graph cannot be compiled.
  static bool argumentsOf(const std::vector<const lazy::Node *> &order,
                          std::vector<const lazy::Value *> &arguments, std::string &why) {
    why = unsupported(order);
    if (!why.empty())
      return false;
    for (const lazy::Node *node : order)
      if (node->op == lazy::Op::Data)
        arguments.push_back(node->value.get());
    return true;
  }

  /// Per argument (the graph's data nodes in `order`), whether it may be
  /// donated (Note [Donation]).
  static std::vector<bool> donationMask(const std::vector<const lazy::Node *> &order,
                                        const std::vector<const lazy::Node *> &donatable) {
    std::vector<bool> mask;
    for (const lazy::Node *node : order)
      if (node->op == lazy::Op::Data)
        mask.push_back(std::find(donatable.begin(), donatable.end(), node) != donatable.end());
    return mask;
  }

  /// The executable cache's key: the graph's structure, which arguments
  /// are donated and the memory budget (a different program when either
  /// changes), and what withConfig adds.
  static uint64_t cacheKey(uint64_t structure, const std::vector<bool> &mask,
                           const CompilerConfig &config) {
    uint64_t key = structure;
    for (bool donated : mask)
      key = (key ^ (donated ? 0x9e3779b97f4a7c15ull : 0x632be59bd9b4e019ull)) * 0x100000001b3ull;
    return withConfig((key ^ static_cast<uint64_t>(config.memory_budget)) * 0x100000001b3ull,
                      config);
  }

  /// `key` made distinct per CPU the kernels are built for and per
  /// allowance of TF32 (nothing changes for "native" and none).
  static uint64_t withConfig(uint64_t key, const CompilerConfig &config) {
    if (config.cpu != "native")
      for (char c : config.cpu)
        key = (key ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
    if (config.allow_tf32)
      key = (key ^ 0x7f4a7c15f32ull) * 0x100000001b3ull;
    return key;
  }

  /// Compiles and loads one program per graph (one kernel library for all);
  /// empty on failure, with the reason in `why`.
  std::vector<std::unique_ptr<Loaded>>
  compileAll(const std::vector<std::vector<lazy::NodePtr>> &graphs, const codegen::Target &target,
             const CompilerConfig &config, const DebugOptions &debug, StepMetrics &step,
             std::string &why, const std::vector<std::vector<bool>> *donatable = nullptr,
             int64_t budget = 0) {
    StepBuild build;
    std::vector<runtime::Program> programs;
    std::string error;
    if (!compileGraphs(graphs, target, programs, build, error, debug, donatable, budget)) {
      why = "compilation failed: " + error.substr(0, error.find('\n'));
      return {};
    }
    add(step, build);
    std::vector<std::unique_ptr<Loaded>> executables;
    for (runtime::Program &program : programs) {
      allowTf32(program, target, config);
      auto executable =
          Loaded::load(std::move(program), target,
                       graphs.front().empty() ? 0 : graphs.front().front()->device.index());
      if (!executable.ok()) {
        why = std::string(executable.status().message());
        return {};
      }
      executables.push_back(std::move(*executable));
    }
    return executables;
  }

  std::unique_ptr<Loaded> compile(const std::vector<lazy::NodePtr> &outputs,
                                  const codegen::Target &target, const CompilerConfig &config,
                                  const DebugOptions &debug, StepMetrics &step, std::string &why,
                                  const std::vector<bool> &donatable) {
    std::vector<std::vector<bool>> perGraph = {donatable};
    std::vector<std::unique_ptr<Loaded>> one =
        compileAll({outputs}, target, config, debug, step, why, &perGraph, config.memory_budget);
    return one.empty() ? nullptr : std::move(one.front());
  }

  std::mutex mutex_;
  std::map<uint64_t, CompiledStep> steps_;
  std::unordered_map<uint64_t, std::unique_ptr<Loaded>> eager_;
};

} // namespace

void install() { detail::register_step_compiler(std::make_shared<CpuStepCompiler>()); }

} // namespace sinter::compiler
