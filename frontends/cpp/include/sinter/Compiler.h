//===- Compiler.h - how mark_step() runs a step ----------------------------===//
//
// mark_step() hands each step's graph to the registered step compiler:
//  - compiled (CompilerConfig::enabled, the default): the whole step is one
//    program of fused kernels, compiled once per graph structure (the
//    executable cache, keyed as in sinter/lazy/Graph.h) and replayed;
//  - eager (enabled = false, or SINTER_COMPILER=0): each op runs as its own
//    one-op program from the same codegen, compiled once per op signature,
//    its result in a fresh buffer from the caching allocator: the same
//    kernels with no fusion and no planning, the baseline to measure against;
//  - the reference executor (use_reference, or SINTER_COMPILER=reference, or
//    no compiler installed): every op in double precision, the oracle.
// The session's settings say which (Note [Sessions] in sinter/Session.h).
// The compiler lives in a separate library (MLIR), which registers itself:
// call sinter::compiler::install() from it (sinter/Compiler/StepCompiler.h).
// A step the compiler cannot run runs on the reference executor, with the
// reason in the metrics (sinter/Metrics.h).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_COMPILER_H
#define SINTER_COMPILER_H

#include "sinter/Metrics.h"
#include "sinter/lazy/Node.h"
#include "sinter/runtime/Program.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sinter {

/// The compiler's settings: a part of sinter::Settings, held by a session
/// (Note [Sessions] in sinter/Session.h). These are the built-in defaults;
/// Settings::fromEnvironment() gives the environment's (Note [The
/// environment, read once] in sinter/runtime/Environment.h; the README's
/// table of variables).
struct CompilerConfig {
  /// Whole steps compiled and fused (true) or each op on its own (eager).
  /// SINTER_COMPILER=1 or 0 sets it at startup.
  bool enabled = true;
  /// Every step on the reference executor (SINTER_COMPILER=reference).
  bool use_reference = false;
  /// SINTER_DEBUG: 1 prints the metrics report at exit and each
  /// recompilation with its reason; 2 also writes the fusion groups with the
  /// reason for every refusal and the fused IR; 3 also the generated kernel
  /// source; 4 also the IR after every pass.
  int debug = 0;
  /// SINTER_DUMP_DIR: where debug files go (stderr when empty).
  std::string dump_dir = {};
  /// SINTER_MEMORY_BUDGET: bytes a compiled step's own memory (what it
  /// allocates beyond its inputs: StepMemory::planned_peak_bytes) should
  /// fit in; the compiler recomputes values after the peak instead of
  /// keeping them until it does or nothing is left to trade (0: no budget;
  /// only recomputation that costs no memory). See StepMemory's
  /// recomputed_values.
  int64_t memory_budget = 0;
  /// SINTER_MEMORY_BUDGET_HARD=1: a step whose smallest plan is over
  /// memory_budget is refused (mark_step() throws, naming the budget, the
  /// plan and the excess) instead of run over it with a warning. Needs a
  /// memory_budget.
  bool memory_budget_hard = false;
  /// SINTER_MEMORY_LIMIT: bytes all of Sinter's host memory may take; a
  /// step whose plan does not fit what is left is refused before it runs
  /// (Note [Out of memory before running]). 0: the system's available
  /// memory.
  int64_t memory_limit = 0;
  /// Note [Fallbacks are said]
  /// A step (or a tensor read) that cannot be compiled (an op or dtype the
  /// CPU backend lacks, no host C++ compiler) runs on the reference
  /// executor, typically a hundred times slower. That is never silent: the
  /// first time for each reason, stderr says so with the reason and the
  /// user's line, and Metrics::fallbacks counts every one. With
  /// allow_fallback false it is an error instead: mark_step() (or the read)
  /// throws sinter::Error with the reason at the user's line, nothing runs
  /// and the tensors stay pending (torch.compile's suppress_errors=False).
  /// sinter-train jobs run with it false unless they allow fallbacks.
  /// SINTER_ALLOW_FALLBACK=0 sets it false at startup.
  bool allow_fallback = true;
  /// What compiled kernels are built for: "native" (this machine's CPU, the
  /// fastest) or an x86-64 level ("x86-64-v3"), as an artifact for other
  /// machines is (sinter-compile --cpu); the same level gives the same
  /// kernels, so an artifact's numbers can be compared with a step compiled
  /// here.
  std::string cpu = "native";
  /// SINTER_CHECK_NUMERICS (1, or 2 for infinities too): every kernel's
  /// f32 results are read as it writes them, in compiled and eager mode,
  /// and the first NaN stops the step: mark_step() (or the read) throws
  /// sinter::Error naming the step, the kernel, its ops and the user's line
  /// (Note [Checked numerics] in sinter/runtime/Program.h). 0: off.
  int check_numerics = 0;
  /// SINTER_ALLOW_TF32=1: f32 matrix products on a GPU may round their
  /// operands to TF32 on tensor cores (10 bits of mantissa, accumulated in
  /// f32), several times faster on A100s and H100s; PyTorch's
  /// torch.backends.cuda.matmul.allow_tf32, false by default as there.
  /// Recorded in each compiled product (runtime::Gemm::tf32), so an
  /// artifact keeps it. No effect on the CPU or the CUDA simulator, which
  /// compute in f32.
  bool allow_tf32 = false;
};

namespace detail {

/// What the compiler library implements.
class StepCompiler {
public:
  virtual ~StepCompiler() = default;
  /// Computes the values of `outputs` (the pending tensors of one step) as
  /// one program, or returns false with the reason in `why` when it cannot
  /// (the reference executor then runs the step). Adds what it did to `step`.
  /// `donatable`: data nodes of the graph that nothing outside it holds, whose
  /// memory results may be written into (Note [Donation]). `communicator`:
  /// what the step's collectives go through (null: none; a step with
  /// collectives then fails with the reason).
  virtual bool run(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
                   const CompilerConfig &config, const std::vector<const lazy::Node *> &donatable,
                   runtime::Communicator *communicator,
                   std::vector<std::shared_ptr<const lazy::Value>> &values, StepMetrics &step,
                   std::string &why) = 0;
  /// Compiles the program `run` would run for `outputs` (or finds it in the
  /// cache) and says its memory (Note [Step memory]) without running it;
  /// without `build_kernels`, only lowers, fuses and plans (no host compiler).
  virtual bool plan(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
                    const CompilerConfig &config, const std::vector<const lazy::Node *> &donatable,
                    bool build_kernels, StepMemory &memory, StepMetrics &step,
                    std::string &why) = 0;
  /// Compiles `outputs` into one program with its kernel library built
  /// (the library's path in program.library), as `run` would, for a
  /// program to be run elsewhere (sinter/Aot.h): not cached, not run.
  virtual bool export_step(const std::vector<lazy::NodePtr> &outputs, const CompilerConfig &config,
                           const std::vector<const lazy::Node *> &donatable,
                           runtime::Program &program, std::string &source, std::string &why) = 0;
  /// Compiles the CUDA source export_step gave (a step on a CUDA device)
  /// for `arch`: "sm_90" (a cubin) or "compute_90" (PTX), or returns false
  /// with the reason; the file's path in `path`.
  virtual bool build_cuda_module(const std::string &source, const std::string &arch,
                                 std::string &path, std::string &why) {
    why = "this compiler builds no CUDA code";
    return false;
  }
  /// The shared libraries (soname, Debian package) the kernel libraries of
  /// export_step need where they run.
  virtual std::vector<std::pair<std::string, std::string>> kernel_library_dependencies() const {
    return {};
  }
  /// The same, op by op (eager mode).
  virtual bool run_eager(const std::vector<lazy::NodePtr> &outputs, const CompilerConfig &config,
                         runtime::Communicator *communicator,
                         std::vector<std::shared_ptr<const lazy::Value>> &values, StepMetrics &step,
                         std::string &why) = 0;
};

void register_step_compiler(std::shared_ptr<StepCompiler> compiler);
std::shared_ptr<StepCompiler> step_compiler();

} // namespace detail
} // namespace sinter

#endif // SINTER_COMPILER_H
