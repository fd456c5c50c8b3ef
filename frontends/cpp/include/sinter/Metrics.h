//===- Metrics.h - what mark_step() has seen ------------------------------===//
//
// mark_step() fingerprints the structure of each step's graph (see Note
// [Graph structure] in sinter/lazy/Graph.h): that fingerprint is what the
// executable cache is keyed by, so the metrics say how often a step was
// compiled and why. With SINTER_DEBUG=1 each recompilation is reported on
// stderr as it happens, with its reason, and the report is printed at exit.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_METRICS_H
#define SINTER_METRICS_H

#include <cstdint>
#include <string>
#include <vector>

namespace sinter {

/// Seconds of compilation, by phase.
struct CompileSeconds {
  double lower = 0;   // lazy graph -> MLIR
  double passes = 0;  // canonicalize, CSE, fusion, ...
  double codegen = 0; // kernels rendered as source
  double build = 0;   // host compiler (or its disk cache), loading
  double total() const { return lower + passes + codegen + build; }
  CompileSeconds &operator+=(const CompileSeconds &other);
};

/// Note [Step memory]
/// A compiled step's memory is known before it runs: the program's arena
/// (activations kept for the backward pass, gradients and the other results
/// the step computes, each from the kernel that writes it, temporaries,
/// kernel workspace, packed by the memory plan) and the buffers of the
/// results the caller allocates (copies: an input returned as is, a
/// constant), each counted in the caching allocator's size class. Updates
/// written into their parameter's or optimizer state's memory (Note
/// [Donation]) take nothing. That is what the step allocates while it runs,
/// on top of its inputs, which exist before and after it (parameters,
/// optimizer state, the batch). The runtime measures the same quantity with
/// the allocator while the step runs; the two are equal, byte for byte.
/// After the run the results in the arena are blocks of their own and the
/// rest of the arena is free (Note [Results in the arena] in
/// sinter/runtime/Program.h).
struct StepMemory {
  /// The arena and the results, planned (before running).
  int64_t planned_peak_bytes = 0;
  /// The same, measured while the step ran (-1: planned, not run).
  int64_t measured_peak_bytes = -1;
  /// Of the planned bytes: the arena (with the results in it), and the
  /// results the caller allocates.
  int64_t arena_bytes = 0;
  int64_t result_bytes = 0;
  /// Results written into the memory of the inputs they replace (Note
  /// [Donation]: parameters, optimizer state), which the step does not
  /// allocate, in the allocator's size class.
  int64_t donated_bytes = 0;
  /// The step's inputs: parameters, optimizer state and the batch.
  int64_t persistent_bytes = 0;
  /// Of the arena at its peak: kernels' workspace, and tensors (activations
  /// kept for the backward pass, gradients, temporaries).
  int64_t peak_workspace_bytes = 0;
  int64_t peak_tensor_bytes = 0;
  /// What holds memory at the peak (arena and results) by the user's source
  /// line, most first: the line, its largest kernel output, the bytes.
  struct Use {
    std::string line;
    std::string example;
    int64_t bytes = 0;
  };
  std::vector<Use> peak_by_line;
  /// The same bytes and the inputs by what they are in training, in this
  /// order, those with no bytes left out: parameters, optimizer state, the
  /// batch and other inputs, gradients, updated values not written in
  /// place, other results (the loss, outputs), activations kept for the
  /// backward pass, temporaries, kernel workspace. The frontend tells the
  /// phases apart (sinter::PhaseGuard; Tensor::backward and the optimizers
  /// mark theirs).
  struct Category {
    std::string name;
    int64_t bytes = 0;
  };
  std::vector<Category> peak_by_category;
  /// Values recomputed after the peak instead of kept (rematerialization;
  /// CompilerConfig::memory_budget trades more), and the extra arithmetic
  /// operations per step that costs.
  int64_t recomputed_values = 0;
  int64_t recompute_operations = 0;
  /// How many times the compiler ran its passes to fit the memory budget (1:
  /// the first plan fit, or there is no budget).
  int64_t pipeline_runs = 1;
  /// Under a memory budget, the arena the compiler's rematerialization
  /// estimated before planning: equal to arena_bytes (one memory model for
  /// both, see docs/ARCHITECTURE.md). 0 without a budget.
  int64_t estimated_arena_bytes = 0;
  /// The budget the step was planned under (CompilerConfig::memory_budget;
  /// 0: none), and by how much its smallest plan found is over it (0 when it
  /// fits): a step over its budget runs over it, with a warning when it is
  /// compiled, unless CompilerConfig::memory_budget_hard refuses it.
  int64_t memory_budget = 0;
  int64_t over_budget_bytes = 0;
};

/// What running one step did (the step compiler fills it in).
struct StepMetrics {
  /// Programs compiled (0 on an executable-cache hit; eager mode compiles
  /// the ops it has not seen, all at once).
  int64_t compilations = 0;
  /// Of those, kernel libraries found in the disk cache.
  int64_t disk_cache_hits = 0;
  CompileSeconds compile;
  /// Kernels launched (fused kernels and library calls).
  int64_t kernels_launched = 0;
  /// A compiled step's memory (Note [Step memory]); untouched by eager runs.
  StepMemory memory;
  /// The step was not run because its plan needs more memory than is
  /// available (Note [Out of memory before running]): an error, not a
  /// reason to fall back to the reference executor.
  bool out_of_memory = false;
  /// A kernel wrote a NaN (or, at level 2, an infinity) while numerics were
  /// checked (Note [Checked numerics] in sinter/runtime/Program.h): an
  /// error, not a reason to fall back.
  bool non_finite = false;
  /// The run failed after it may have written results over the memory of
  /// inputs it was given (Note [Donation]: parameters, optimizer state):
  /// an error, since no other way can compute the step from them now.
  bool inputs_overwritten = false;
};

struct Metrics {
  /// mark_step() calls that had something to compute.
  int64_t steps = 0;
  /// Graphs of a structure not seen before (each needs a compilation).
  int64_t distinct_graphs = 0;
  /// Graphs whose structure was seen before (cache hits).
  int64_t repeated_graphs = 0;
  /// Steps run compiled and eagerly (the rest ran on the reference executor).
  int64_t compiled_steps = 0;
  int64_t eager_steps = 0;
  /// Programs compiled, kernel libraries taken from the disk cache, and the
  /// time spent compiling, by phase.
  int64_t compilations = 0;
  int64_t disk_cache_hits = 0;
  CompileSeconds compile;
  /// Seconds spent running steps (compilation excluded).
  double execute_seconds = 0;
  /// Kernels launched by compiled and eager steps.
  int64_t kernels_launched = 0;
  /// The memory of the last compiled step (Note [Step memory]).
  StepMemory last_step_memory;
  /// Steps and tensor reads that the compiler could not compile, which the
  /// reference executor ran instead (far slower: Note [Fallbacks are said]
  /// in sinter/Compiler.h), and why (one line per distinct reason).
  int64_t fallbacks = 0;
  std::vector<std::string> fallback_reasons;
  /// One line per step that changed structure at a call site that had
  /// recorded a graph before: the call site and the first difference.
  std::vector<std::string> recompile_reasons;
};

/// The metrics since the start of the process (or the last reset).
Metrics metrics();
void reset_metrics();
/// The metrics as a few lines of text.
std::string metrics_report();

/// After this many distinct graphs at one mark_step() call site, a one-time
/// warning says the step keeps changing.
inline constexpr int64_t kRecompileWarningLimit = 8;

} // namespace sinter

#endif // SINTER_METRICS_H
