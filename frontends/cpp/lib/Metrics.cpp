//===- Metrics.cpp - what the steps did, and the report -------------------===//
#include "sinter/Metrics.h"
#include "Step.h"
#include "sinter/Compiler.h"
#include "sinter/Error.h"
#include "sinter/lazy/Graph.h"

#include "Format.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace sinter {
namespace {

/// A copy of a graph's structure without its values, to compare the next
/// step's graph with after this one is freed.
std::vector<lazy::NodePtr> skeleton(const std::vector<lazy::NodePtr> &outputs) {
  std::unordered_map<const lazy::Node *, lazy::NodePtr> copies;
  for (const lazy::Node *node : lazy::topological_order(outputs)) {
    auto copy = std::make_shared<lazy::Node>();
    copy->op = node->op;
    copy->attrs = node->attrs;
    copy->shape = node->shape;
    copy->dtype = node->dtype;
    copy->device = node->device;
    copy->loc = node->loc;
    for (const lazy::NodePtr &operand : node->operands)
      copy->operands.push_back(copies.at(operand.get()));
    copies[node] = std::move(copy);
  }
  std::vector<lazy::NodePtr> result;
  for (const lazy::NodePtr &output : outputs)
    result.push_back(copies.at(output.get()));
  return result;
}

struct StepSite {
  std::vector<lazy::NodePtr> lastGraph;
  uint64_t lastHash = 0;
  std::unordered_set<uint64_t> hashes;
  bool warned = false;
  /// Per data node of the last compiled graph (topological order), whether
  /// its memory could be given to a result (Note [Donation]); the graph
  /// structures and donation masks compiled so far.
  uint64_t lastDonationStructure = 0;
  std::vector<bool> lastDonation;
  std::set<std::pair<uint64_t, std::vector<bool>>> donations;
};

struct MetricsState {
  std::mutex mutex;
  Metrics metrics;
  std::unordered_set<uint64_t> seen;
  std::map<std::string, StepSite> sites;
};

MetricsState &metricsState() {
  static MetricsState *state = new MetricsState();
  return *state;
}

} // namespace

/// Counts this step's graph and, when the step at `loc` changed structure,
/// says why.
uint64_t detail::recordStep(const std::vector<lazy::NodePtr> &outputs, int debug, Loc loc) {
  uint64_t hash = lazy::structural_hash(outputs);
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  ++state.metrics.steps;
  bool fresh = state.seen.insert(hash).second;
  ++(fresh ? state.metrics.distinct_graphs : state.metrics.repeated_graphs);
  std::string key = cat(loc.file_name(), ":", loc.line());
  StepSite &site = state.sites[key];
  if (!site.lastGraph.empty() && site.lastHash != hash && fresh) {
    std::string reason =
        cat("mark_step at ", key, ": ", lazy::first_difference(site.lastGraph, outputs));
    state.metrics.recompile_reasons.push_back(reason);
    if (debug >= 1)
      std::fprintf(stderr, "sinter: new graph structure, %s\n", reason.c_str());
  }
  site.hashes.insert(hash);
  if (!site.warned && static_cast<int64_t>(site.hashes.size()) > kRecompileWarningLimit) {
    site.warned = true;
    std::fprintf(stderr,
                 "sinter: warning: the step at %s has recorded %zu different graphs; each one is "
                 "compiled separately. Keep shapes fixed and pass changing values as tensors "
                 "(see sinter::metrics_report()).\n",
                 key.c_str(), site.hashes.size());
  }
  if (site.lastHash != hash) {
    site.lastGraph = skeleton(outputs);
    site.lastHash = hash;
  }
  return hash;
}

/// A compiled step is compiled again when the same graph gives other inputs'
/// memory to its results (Note [Donation]: a value held outside the step is
/// never written over). Says which input changed, once per new combination.
/// `inputs`: the step's data nodes (topological order); `mask`: per input,
/// whether its memory may be given to a result.
void detail::recordDonation(uint64_t structure, const std::vector<const lazy::Node *> &inputs,
                            std::vector<bool> mask, int debug, Loc loc) {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  std::string key = cat(loc.file_name(), ":", loc.line());
  StepSite &site = state.sites[key];
  bool fresh = site.donations.insert({structure, mask}).second;
  if (fresh && structure == site.lastDonationStructure && site.lastDonation != mask) {
    size_t i = 0;
    while (site.lastDonation[i] == mask[i])
      ++i;
    const lazy::Node &input = *inputs[i];
    std::string reason =
        cat("mark_step at ", key, ": the same graph, but input ", i, " (", name(input.dtype),
            sinter::toString(input.shape), ", from ", input.loc.file_name(), ":", input.loc.line(),
            ") is ",
            mask[i] ? "no longer held outside the step, so its update may take its memory"
                    : "now held outside the step (a tensor still refers to it), so its update "
                      "needs memory of its own");
    state.metrics.recompile_reasons.push_back(reason);
    if (debug >= 1)
      std::fprintf(stderr, "sinter: new donation of inputs, %s\n", reason.c_str());
  }
  site.lastDonationStructure = structure;
  site.lastDonation = std::move(mask);
}

Metrics metrics() {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.metrics;
}

void reset_metrics() {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.metrics = Metrics();
  state.seen.clear();
  state.sites.clear();
}

std::string metrics_report() {
  Metrics m = metrics();
  std::string report =
      cat("steps: ", m.steps, " (compiled: ", m.compiled_steps, ", eager: ", m.eager_steps,
          ", reference: ", m.steps - m.compiled_steps - m.eager_steps, ")",
          "\ndistinct graphs: ", m.distinct_graphs,
          "\nrepeated graphs (cache hits): ", m.repeated_graphs, "\ncompilations: ", m.compilations,
          " (kernel libraries from disk: ", m.disk_cache_hits, ")",
          "\ncompile time: ", m.compile.total(), " s (lower ", m.compile.lower, ", passes ",
          m.compile.passes, ", codegen ", m.compile.codegen, ", build ", m.compile.build, ")",
          "\nexecute time: ", m.execute_seconds, " s", "\nkernels launched: ", m.kernels_launched,
          "\n");
  if (const StepMemory &memory = m.last_step_memory; memory.planned_peak_bytes > 0)
    report +=
        cat("last compiled step's memory: ", memory.planned_peak_bytes, " bytes planned (arena ",
            memory.arena_bytes, ", results ", memory.result_bytes, "), ",
            memory.measured_peak_bytes, " measured, on top of ", memory.persistent_bytes,
            " bytes of inputs; ", memory.recomputed_values, " values recomputed instead of kept (",
            memory.recompute_operations, " extra operations)\n");
  for (const std::string &reason : m.recompile_reasons)
    report += cat("recompiled: ", reason, "\n");
  if (m.fallbacks > 0)
    report += cat("fallbacks to the reference executor: ", m.fallbacks, "\n");
  for (const std::string &reason : m.fallback_reasons)
    report += cat("ran on the reference executor: ", reason, "\n");
  return report;
}

void detail::printMetricsAtExit() {
  static std::once_flag atExit;
  std::call_once(atExit, [] {
    std::atexit([] { std::fprintf(stderr, "sinter metrics:\n%s", metrics_report().c_str()); });
  });
}

/// Note [Fallbacks are said]: counts a step or read that the compiler could
/// not compile, says why on stderr the first time for each reason, and
/// throws instead when `config` allows no fallback.
void detail::noteFallback(const std::string &why, const CompilerConfig &config, const char *what,
                          Loc loc) {
  if (!config.allow_fallback)
    throwError(cat(what,
                   " cannot be compiled, and fallbacks to the reference executor are not "
                   "allowed (CompilerConfig::allow_fallback; a job's "
                   "compiler_config.allow_fallback): ",
                   why),
               loc);
  // The reference executor checks no numerics: asked for, a fallback would
  // run unchecked.
  if (config.check_numerics > 0)
    throwError(cat(what,
                   " cannot be compiled, and the reference executor cannot check its numerics "
                   "(CompilerConfig::check_numerics): ",
                   why),
               loc);
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  ++state.metrics.fallbacks;
  std::vector<std::string> &reasons = state.metrics.fallback_reasons;
  if (std::find(reasons.begin(), reasons.end(), why) != reasons.end())
    return;
  reasons.push_back(why);
  std::fprintf(stderr,
               "sinter: warning: %s at %s:%u runs on the reference executor (far slower than "
               "compiled): %s\n",
               what, loc.file_name(), loc.line(), why.c_str());
}

/// Adds what one run did to the metrics: `seconds` in all, of which its
/// compilations' time is counted as compiling, the rest as executing.
void detail::addRun(const StepMetrics &step, double seconds) {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  Metrics &m = state.metrics;
  m.execute_seconds += std::max(0.0, seconds - step.compile.total());
  m.compilations += step.compilations;
  m.disk_cache_hits += step.disk_cache_hits;
  m.compile += step.compile;
  m.kernels_launched += step.kernels_launched;
}

void detail::recordStepEnd(bool compiled, bool enabled, const StepMemory &memory) {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (compiled && enabled)
    state.metrics.last_step_memory = memory;
  state.metrics.compiled_steps += compiled && enabled;
  state.metrics.eager_steps += compiled && !enabled;
}

} // namespace sinter
