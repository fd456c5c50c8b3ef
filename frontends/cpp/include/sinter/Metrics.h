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
  /// Why steps fell back to the reference executor (one line per distinct reason).
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
