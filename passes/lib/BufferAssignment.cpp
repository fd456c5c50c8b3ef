//===- BufferAssignment.cpp - donation, in-place reuse, the arena ---------===//
#include "sinter/Passes/BufferAssignment.h"

#include "sinter/Passes/MemoryReport.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace sinter::planner {

std::vector<int> firstWriters(const runtime::Program &program) {
  std::vector<int> writer(program.buffers.size(), -1);
  std::vector<const runtime::Program::Step *> launches = runtime::launchesOf(program);
  for (size_t k = 0; k < launches.size(); ++k)
    for (int b : launches[k]->outputs)
      if (writer[b] < 0)
        writer[b] = static_cast<int>(k);
  return writer;
}

void donateArguments(runtime::Program &program, const std::vector<bool> *donatable,
                     const AssignmentRules &rules, std::string &report) {
  program.donors.assign(program.results.size(), -1);
  if (donatable == nullptr)
    return;
  program.donors =
      donorsOf(dataflowOf(program, rules), program.arguments, program.results, donatable);
  // Reported in the order they are paired: by writer.
  for (size_t r : byFirstWriter(program.results, firstWriters(program)))
    if (int chosen = program.donors[r]; chosen >= 0)
      report += "result " + std::to_string(r) + " is written into argument " +
                std::to_string(chosen) + " (" +
                std::to_string(program.buffers[program.results[r]].bytes) + " bytes, donated)\n";
}

Dataflow dataflowOf(const runtime::Program &program, const AssignmentRules &rules) {
  Dataflow flow;
  size_t n = program.buffers.size();
  for (const runtime::Program::Buffer &buffer : program.buffers)
    flow.bytes.push_back(buffer.bytes);
  flow.argument.assign(n, false);
  flow.returned.assign(n, false);
  flow.donated.assign(n, false);
  for (int b : program.arguments)
    flow.argument[b] = true;
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    // Only a value's first return is paired with an argument (donateArguments).
    if (!flow.returned[b] && r < program.donors.size() && program.donors[r] >= 0)
      flow.donated[b] = true;
    flow.returned[b] = true;
  }
  std::vector<const runtime::Program::Step *> launches = runtime::launchesOf(program);
  for (size_t k = 0; k < launches.size(); ++k) {
    const runtime::Program::Step &launch = *launches[k];
    Dataflow::Kernel &kernel = flow.kernels.emplace_back();
    kernel.reads = launch.inputs;
    kernel.writes = launch.outputs;
    kernel.readOffsets = launch.inputOffsets;
    kernel.results = launch.results;
    for (unsigned j = 0; j < launch.inputs.size(); ++j)
      for (unsigned r = 0; r < static_cast<unsigned>(launch.results); ++r)
        if (rules.writesInPlace(k, j, r))
          kernel.inPlace.emplace_back(j, r);
  }
  flow.allocationSize = rules.allocationSize;
  flow.alignment = rules.alignment;
  flow.resultsInArena = rules.resultsInArena;
  return flow;
}

std::vector<int> reuseInPlace(const runtime::Program &program, const AssignmentRules &rules,
                              std::string &report) {
  std::vector<const runtime::Program::Step *> launches = runtime::launchesOf(program);
  std::vector<int> order(launches.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int> into = writtenOver(dataflowOf(program, rules), order);
  for (const runtime::Program::Step *launch : launches)
    for (int r = 0; r < launch->results; ++r)
      if (int out = launch->outputs[r], in = into[out]; in >= 0)
        report += "buffer " + std::to_string(out) + " is written over buffer " +
                  std::to_string(in) + " (" + std::to_string(program.buffers[in].bytes) +
                  " bytes, in place)\n";
  return into;
}

Status packArena(runtime::Program &program, const std::vector<int> &into,
                 const AssignmentRules &rules, std::string &report) {
  // Note [One memory model] in sinter/Passes/MemoryPlanner.h: the lives
  // the rematerialization pass simulates.
  size_t n = program.buffers.size();
  std::vector<const runtime::Program::Step *> launches = runtime::launchesOf(program);
  std::vector<int> order(launches.size());
  std::iota(order.begin(), order.end(), 0);
  Dataflow flow = dataflowOf(program, rules);
  Lifetimes lifetimes = lifetimesOf(flow, order, into);
  const std::vector<Live> &live = lifetimes.live;
  const std::vector<int> &which = lifetimes.held;
  // The first return of a value a kernel writes (not into an argument) is
  // handed out of the arena, where the target plans results there (else
  // every result is the caller's); the others are copied out at the end.
  std::vector<bool> written(n, false), handedOut(n, false);
  for (const runtime::Program::Step *launch : launches)
    for (int b : launch->outputs)
      written[b] = true;
  program.inArena.assign(program.results.size(), false);
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    if (rules.resultsInArena && written[b] && !flow.argument[b] && !flow.donated[b] &&
        program.buffers[b].bytes > 0 && !handedOut[b])
      handedOut[b] = program.inArena[r] = true;
  }
  std::vector<Live> planned;
  for (int b : which)
    planned.push_back(live[b]);
  Plan plan = planSmallest(planned, rules.alignment);
  if (std::string wrong = verifyPlan(planned, plan); !wrong.empty())
    return absl::InternalError("the memory plan is wrong: " + wrong);
  // An empty intermediate takes no bytes: any offset will do. (An empty
  // result is the caller's, as arguments are.)
  for (size_t b = 0; b < n; ++b)
    if (!flow.argument[b] && !flow.returned[b] && program.buffers[b].bytes == 0 && into[b] < 0)
      program.buffers[b].offset = 0;
  for (size_t i = 0; i < which.size(); ++i)
    program.buffers[which[i]].offset = plan.offsets[i];
  auto root = [&](int b) {
    while (into[b] >= 0)
      b = into[b];
    return b;
  };
  for (size_t b = 0; b < n; ++b)
    if (into[b] >= 0)
      program.buffers[b].offset = program.buffers[root(static_cast<int>(b))].offset;
  program.arenaBytes = plan.size;
  reportPeak(program, live, which, rules.allocationSize);
  // The report: the arena, then its buffers by size.
  std::vector<size_t> bySize(which.size());
  std::iota(bySize.begin(), bySize.end(), size_t{0});
  std::stable_sort(bySize.begin(), bySize.end(),
                   [&](size_t a, size_t b) { return planned[a].bytes > planned[b].bytes; });
  std::vector<int> writer = firstWriters(program);
  report += "arena: " + std::to_string(plan.size) + " bytes for " + std::to_string(which.size()) +
            " buffers over " + std::to_string(launches.size()) + " launches (packed in order of " +
            packingOrderName(plan.order) + ")\n" +
            "buffer      bytes     offset  first   last  written by\n";
  for (size_t i : bySize) {
    int w = writer[which[i]];
    char row[96];
    std::snprintf(row, sizeof row, "%6d %10lld %10lld %6lld %6lld  ", which[i],
                  static_cast<long long>(planned[i].bytes), static_cast<long long>(plan.offsets[i]),
                  static_cast<long long>(planned[i].first),
                  static_cast<long long>(planned[i].last));
    report.append(row).append(w < 0 ? std::string("a constant") : launches[w]->label);
    report += "\n";
  }
  return absl::OkStatus();
}

void appendCopies(runtime::Program &program) {
  std::erase_if(program.steps, [](const runtime::Program::Step &step) {
    return step.kind == runtime::Program::Step::Kind::Copy;
  });
  // As CpuExecutable::load binds them: the first return of a buffer that is
  // neither an argument nor placed is written in place by its kernel.
  std::vector<bool> bound(program.buffers.size(), false);
  for (int b : program.arguments)
    bound[b] = true;
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    bool inPlace = program.buffers[b].offset < 0 && !bound[b];
    bound[b] = true;
    if (inPlace || program.inArena[r] || program.buffers[b].bytes == 0)
      continue;
    runtime::Program::Step copy;
    copy.kind = runtime::Program::Step::Kind::Copy;
    copy.inputs = {b};
    copy.result = static_cast<int>(r);
    program.steps.push_back(std::move(copy));
  }
}

Status assignBuffers(runtime::Program &program, const std::vector<bool> *donatable,
                     const AssignmentRules &rules, std::string &report) {
  std::string pairs;
  donateArguments(program, donatable, rules, pairs);
  std::vector<int> into = reuseInPlace(program, rules, pairs);
  SINTER_RETURN_IF_ERROR(packArena(program, into, rules, report));
  report += pairs;
  appendCopies(program);
  return absl::OkStatus();
}

} // namespace sinter::planner
