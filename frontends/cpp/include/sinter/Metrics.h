//===- Metrics.h - what mark_step() has seen ------------------------------===//
//
// mark_step() fingerprints the structure of each step's graph (see Note
// [Graph structure] in sinter/lazy/Graph.h): that fingerprint is what the
// executable cache is keyed by, so the metrics say how often a step would be
// compiled and why. With SINTER_DEBUG=1 each recompilation is reported on
// stderr as it happens, with its reason.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_METRICS_H
#define SINTER_METRICS_H

#include <cstdint>
#include <string>
#include <vector>

namespace sinter {

struct Metrics {
  /// mark_step() calls that had something to compute.
  int64_t steps = 0;
  /// Graphs of a structure not seen before (each needs a compilation).
  int64_t distinct_graphs = 0;
  /// Graphs whose structure was seen before (cache hits).
  int64_t repeated_graphs = 0;
  /// Seconds spent computing steps.
  double execute_seconds = 0;
  /// Steps run by the compiler (the rest ran on the reference executor).
  int64_t compiled_steps = 0;
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
