//===- MemoryReport.cpp - what holds memory at a step's peak --------------===//
#include "sinter/Passes/MemoryReport.h"

#include "sinter/Passes/BufferAssignment.h"

#include <algorithm>
#include <map>
#include <string>

namespace sinter::planner {

namespace {

enum Category {
  Parameters,
  OptimizerState,
  Batch,
  Gradients,
  NewValues,
  OtherResults,
  Activations,
  Temporaries,
  Workspace,
  Categories
};
constexpr const char *kCategoryNames[Categories] = {
    "parameters",
    "optimizer state",
    "the batch and other inputs",
    "gradients",
    "updated values not written in place",
    "other results (the loss, outputs)",
    "activations kept for the backward pass",
    "temporaries",
    "kernel workspace",
};

/// Fills program.report.peakCategories (Note [Memory by category]) from the
/// buffers counted at the peak (arena and results, `held` bytes each) and
/// the arguments.
void peakCategories(runtime::Program &program, const std::vector<bool> &counted,
                    const std::vector<bool> &workspace, const std::vector<int64_t> &held,
                    const std::function<int64_t(int64_t)> &allocationSize) {
  using Phase = runtime::Program::Step::Phase;
  using Role = runtime::Program::Role;
  size_t n = program.buffers.size();
  std::vector<int> latestReader(n, -1);
  for (const runtime::Program::Step *launch : runtime::launchesOf(program))
    for (int b : launch->inputs)
      latestReader[b] = std::max(latestReader[b], static_cast<int>(launch->phase));
  std::vector<bool> isArgument(n, false), isResult(n, false);
  std::vector<Role> roleOf(n, Role::BatchInput);
  // The signature's roles (Note [The step's signature]); a program without
  // one (built by hand) by its launches' phases.
  std::vector<Role> roles;
  for (const runtime::Program::Value &value : program.signature.arguments)
    roles.push_back(value.role);
  if (roles.size() != program.arguments.size())
    roles = argumentRolesByReaders(program);
  for (size_t a = 0; a < program.arguments.size(); ++a) {
    isArgument[program.arguments[a]] = true;
    roleOf[program.arguments[a]] = roles[a];
  }
  for (int b : program.results)
    isResult[b] = true;
  int64_t bytes[Categories] = {};
  for (size_t b = 0; b < n; ++b) {
    int64_t size = held[b];
    auto written = static_cast<Phase>(program.buffers[b].phase);
    if (isArgument[b]) { // held in the allocator's size class, as persistent_bytes counts
      Role role = roleOf[b];
      bytes[role == Role::Parameter                                       ? Parameters
            : role == Role::OptimizerState || role == Role::StepScalar ? OptimizerState
                                                                        : Batch] +=
          allocationSize(size);
    } else if (!counted[b]) {
      continue;
    } else if (workspace[b]) {
      bytes[Workspace] += size;
    } else if (isResult[b]) {
      bytes[written == Phase::Backward ? Gradients
            : written == Phase::Update ? NewValues
                                       : OtherResults] += size;
    } else {
      bool kept = written == Phase::Forward && latestReader[b] > static_cast<int>(Phase::Forward);
      bytes[kept ? Activations : Temporaries] += size;
    }
  }
  program.report.peakCategories.clear();
  for (int c = 0; c < Categories; ++c)
    if (bytes[c] > 0)
      program.report.peakCategories.push_back({kCategoryNames[c], bytes[c]});
}

} // namespace

std::vector<runtime::Program::Role> argumentRolesByReaders(const runtime::Program &program) {
  using Phase = runtime::Program::Step::Phase;
  size_t n = program.buffers.size();
  // The latest phase that reads each buffer, and whether the forward pass does.
  std::vector<int> latestReader(n, -1);
  std::vector<bool> forwardReads(n, false);
  for (const runtime::Program::Step *launch : runtime::launchesOf(program))
    for (int b : launch->inputs) {
      latestReader[b] = std::max(latestReader[b], static_cast<int>(launch->phase));
      forwardReads[b] = forwardReads[b] || launch->phase == Phase::Forward;
    }
  std::vector<runtime::Program::Role> roles;
  for (int b : program.arguments) {
    bool updated = latestReader[b] == static_cast<int>(Phase::Update);
    roles.push_back(!updated          ? runtime::Program::Role::BatchInput
                    : forwardReads[b] ? runtime::Program::Role::Parameter
                                      : runtime::Program::Role::OptimizerState);
  }
  return roles;
}

void reportPeak(runtime::Program &program, const std::vector<Live> &live,
                const std::vector<int> &planned,
                const std::function<int64_t(int64_t)> &allocationSize) {
  size_t n = program.buffers.size();
  std::vector<int> writer = firstWriters(program);
  std::vector<bool> workspace(n, false);
  std::vector<const runtime::Program::Step *> launches = runtime::launchesOf(program);
  for (const runtime::Program::Step *launch : launches)
    for (size_t j = static_cast<size_t>(launch->results); j < launch->outputs.size(); ++j)
      workspace[launch->outputs[j]] = true;
  int64_t end = static_cast<int64_t>(launches.size()), peakAt = 0, most = -1;
  for (int64_t t = 0; t < end; ++t) {
    int64_t bytes = 0;
    for (int b : planned)
      if (live[b].first <= t && t <= live[b].last)
        bytes += live[b].bytes;
    if (bytes > most)
      most = bytes, peakAt = t;
  }
  std::vector<bool> counted(n, false);
  program.report.peakWorkspaceBytes = program.report.peakTensorBytes = 0;
  for (int b : planned) {
    counted[b] = live[b].first <= peakAt && peakAt <= live[b].last;
    if (counted[b])
      (workspace[b] ? program.report.peakWorkspaceBytes : program.report.peakTensorBytes) += live[b].bytes;
  }
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    counted[b] = counted[b] || (program.buffers[b].offset < 0 && program.donors[r] < 0);
  }
  for (int b : program.arguments)
    counted[b] = false; // the inputs, held before the step
  std::map<std::string, runtime::Program::Report::PeakUse> byLine;
  std::map<std::string, int64_t> largest;
  // The bytes each buffer holds: a result in the arena, its size class.
  std::vector<int64_t> held(n);
  for (size_t b = 0; b < n; ++b)
    held[b] = live[b].bytes;
  for (size_t b = 0; b < n; ++b) {
    if (!counted[b] || held[b] == 0)
      continue;
    std::string label = writer[b] < 0 ? std::string("a constant or a copied result")
                                      : launches[writer[b]]->label;
    if (workspace[b])
      label = "workspace of " + label;
    size_t arrow = label.rfind(" <- ");
    std::string line = arrow == std::string::npos ? label : label.substr(arrow + 4);
    runtime::Program::Report::PeakUse &use = byLine[line];
    use.line = line;
    use.bytes += held[b];
    if (held[b] > largest[line]) {
      largest[line] = held[b];
      use.example = label.substr(0, arrow);
    }
  }
  program.report.peakUses.clear();
  for (auto &[line, use] : byLine)
    program.report.peakUses.push_back(std::move(use));
  std::stable_sort(program.report.peakUses.begin(), program.report.peakUses.end(),
                   [](const auto &a, const auto &b) { return a.bytes > b.bytes; });
  peakCategories(program, counted, workspace, held, allocationSize);
}

} // namespace sinter::planner
