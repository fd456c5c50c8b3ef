//===- BufferAssignment.cpp - donation, in-place reuse, the arena ---------===//
#include "sinter/Passes/BufferAssignment.h"

#include "sinter/Passes/MemoryReport.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace sinter::planner {

std::vector<int> firstWriters(const runtime::Program &program) {
  std::vector<int> writer(program.buffers.size(), -1);
  for (size_t k = 0; k < program.launches.size(); ++k)
    for (int b : program.launches[k].outputs)
      if (writer[b] < 0)
        writer[b] = static_cast<int>(k);
  return writer;
}

std::vector<int> lastReaders(const runtime::Program &program) {
  std::vector<int> reader(program.buffers.size(), -1);
  for (size_t k = 0; k < program.launches.size(); ++k)
    for (int b : program.launches[k].inputs)
      reader[b] = static_cast<int>(k);
  return reader;
}

namespace {

/// The byte offset a launch reads its input `j` at (a slice view).
int64_t offsetOf(const runtime::Program::Launch &launch, size_t j) {
  return launch.inputOffsets.empty() ? 0 : launch.inputOffsets[j];
}

/// Whether launch `k` may write its output `result` over buffer `input`:
/// every time it reads `input`, at offset 0 and only at the index it writes.
bool overwritable(const runtime::Program &program, size_t k, int input, unsigned result,
                  const AssignmentRules &rules) {
  const runtime::Program::Launch &launch = program.launches[k];
  for (size_t j = 0; j < launch.inputs.size(); ++j)
    if (launch.inputs[j] == input &&
        (offsetOf(launch, j) != 0 || !rules.writesInPlace(k, static_cast<unsigned>(j), result)))
      return false;
  return true;
}

} // namespace

void donateArguments(runtime::Program &program, const std::vector<bool> *donatable,
                     const AssignmentRules &rules, std::string &report) {
  program.donors.assign(program.results.size(), -1);
  if (donatable == nullptr)
    return;
  size_t n = program.buffers.size();
  std::vector<int> writer = firstWriters(program), lastReader = lastReaders(program);
  std::vector<bool> isArgument(n, false), taken(program.arguments.size(), false);
  for (int b : program.arguments)
    isArgument[b] = true;
  // An argument the step also returns is copied out after the run: its
  // memory must still hold it then.
  for (size_t a = 0; a < program.arguments.size(); ++a)
    taken[a] = std::find(program.results.begin(), program.results.end(), program.arguments[a]) !=
               program.results.end();
  std::vector<bool> returned(n, false);
  // Results in the order they are written: an argument free by one result's
  // writer is free for every later one, so pairing the earliest first never
  // takes an argument from a result that alone could use it (taking them in
  // return order left an update written early, before its own argument's
  // peers were dead, with nothing to write into).
  std::vector<size_t> byWriter(program.results.size());
  std::iota(byWriter.begin(), byWriter.end(), size_t{0});
  std::stable_sort(byWriter.begin(), byWriter.end(), [&](size_t x, size_t y) {
    return writer[program.results[x]] < writer[program.results[y]];
  });
  for (size_t r : byWriter) {
    int buffer = program.results[r];
    int w = writer[buffer];
    bool again = returned[buffer];
    returned[buffer] = true;
    if (isArgument[buffer] || w < 0 || again)
      continue; // returned as is, or a second time (a copy)
    const std::vector<int> &outputs = program.launches[w].outputs;
    auto own =
        static_cast<unsigned>(std::find(outputs.begin(), outputs.end(), buffer) - outputs.begin());
    int chosen = -1;
    for (size_t a = 0; a < program.arguments.size() && chosen < 0; ++a) {
      int input = program.arguments[a];
      if (a >= donatable->size() || !(*donatable)[a] || taken[a] ||
          program.buffers[input].bytes != program.buffers[buffer].bytes || lastReader[input] > w)
        continue;
      if (lastReader[input] < w || overwritable(program, w, input, own, rules))
        chosen = static_cast<int>(a);
    }
    if (chosen < 0)
      continue;
    taken[chosen] = true;
    program.donors[r] = chosen;
    report += "result " + std::to_string(r) + " is written into argument " +
              std::to_string(chosen) + " (" + std::to_string(program.buffers[buffer].bytes) +
              " bytes, donated)\n";
  }
}

std::vector<int> reuseInPlace(const runtime::Program &program, const AssignmentRules &rules,
                              std::string &report) {
  size_t n = program.buffers.size();
  std::vector<int> into(n, -1), lastReader = lastReaders(program);
  std::vector<bool> callers(n, false), taken(n, false);
  for (int b : program.arguments)
    callers[b] = true;
  for (int b : program.results)
    callers[b] = true; // the caller's memory, or copied out at the end
  for (const runtime::Program::Fill &fill : program.fills)
    taken[fill.buffer] = true; // filled each run: not a kernel's to reuse
  for (size_t k = 0; k < program.launches.size(); ++k) {
    const runtime::Program::Launch &launch = program.launches[k];
    for (int r = 0; r < launch.results; ++r) {
      int out = launch.outputs[r];
      if (callers[out] || into[out] >= 0)
        continue;
      for (size_t i = 0; i < launch.inputs.size() && into[out] < 0; ++i) {
        int in = launch.inputs[i];
        if (callers[in] || taken[in] || lastReader[in] != static_cast<int>(k) ||
            program.buffers[in].bytes != program.buffers[out].bytes ||
            std::count(launch.outputs.begin(), launch.outputs.end(), in) > 0 ||
            !overwritable(program, k, in, static_cast<unsigned>(r), rules))
          continue;
        into[out] = in;
        taken[in] = true;
        report += "buffer " + std::to_string(out) + " is written over buffer " +
                  std::to_string(in) + " (" + std::to_string(program.buffers[in].bytes) +
                  " bytes, in place)\n";
      }
    }
  }
  return into;
}

Status packArena(runtime::Program &program, const std::vector<int> &into,
                 const AssignmentRules &rules, std::string &report) {
  // Arguments and donated results are the caller's; the rest live from the
  // launch that writes them (constants: from their first reader) to their
  // last reader, and results to the end (Note [Results in the arena] in
  // sinter/runtime/Program.h; the first return of a value a kernel writes is
  // handed out, later ones and the others are copied out at the end).
  size_t n = program.buffers.size();
  int64_t end = static_cast<int64_t>(program.launches.size());
  std::vector<bool> external(n, false), written(n, false);
  for (int b : program.arguments)
    external[b] = true;
  for (const runtime::Program::Launch &launch : program.launches)
    for (int b : launch.outputs)
      written[b] = true;
  std::vector<bool> copied(n, false), handedOut(n, false);
  program.inArena.assign(program.results.size(), false);
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    bool first = written[b] && !external[b] && !handedOut[b];
    if (first && (program.donors[r] >= 0 || program.buffers[b].bytes == 0)) {
      external[b] = true; // written into the caller's memory
    } else if (first) {
      handedOut[b] = true;
      program.inArena[r] = true;
    } else if (!external[b] || !written[b]) {
      copied[b] = true;
    }
  }
  std::vector<Live> live(n, {0, end, -1});
  for (size_t b = 0; b < n; ++b)
    live[b].bytes = handedOut[b] ? rules.allocationSize(program.buffers[b].bytes)
                                 : program.buffers[b].bytes;
  for (const runtime::Program::Fill &fill : program.fills)
    live[fill.buffer].first = fill.launch;
  for (int64_t k = 0; k < end; ++k) {
    const runtime::Program::Launch &launch = program.launches[k];
    for (int b : launch.outputs)
      live[b].first = std::min(live[b].first, k), live[b].last = std::max(live[b].last, k);
    for (int b : launch.inputs)
      live[b].last = std::max(live[b].last, k);
  }
  // A buffer written in place over another (Note [In-place kernels]) is
  // part of that one's life; `root` follows the chain.
  auto root = [&](int b) {
    while (into[b] >= 0)
      b = into[b];
    return b;
  };
  for (size_t b = 0; b < n; ++b)
    if (into[b] >= 0) {
      int r = root(static_cast<int>(b));
      live[r].last = std::max({live[r].last, live[b].last, live[b].first});
    }
  std::vector<Live> planned;
  std::vector<int> which;
  for (size_t b = 0; b < n; ++b) {
    if (external[b] || into[b] >= 0)
      continue;
    if (copied[b] || handedOut[b])
      live[b].last = end;
    if (live[b].last < live[b].first) // never read: live while written
      live[b].last = live[b].first;
    planned.push_back(live[b]);
    which.push_back(static_cast<int>(b));
  }
  Plan plan = planSmallest(planned, rules.alignment);
  if (std::string wrong = verifyPlan(planned, plan); !wrong.empty())
    return absl::InternalError("the memory plan is wrong: " + wrong);
  for (size_t i = 0; i < which.size(); ++i)
    program.buffers[which[i]].offset = plan.offsets[i];
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
            " buffers over " + std::to_string(program.launches.size()) +
            " launches (packed in order of " + packingOrderName(plan.order) + ")\n" +
            "buffer      bytes     offset  first   last  written by\n";
  for (size_t i : bySize) {
    int w = writer[which[i]];
    char row[96];
    std::snprintf(row, sizeof row, "%6d %10lld %10lld %6lld %6lld  ", which[i],
                  static_cast<long long>(planned[i].bytes), static_cast<long long>(plan.offsets[i]),
                  static_cast<long long>(planned[i].first),
                  static_cast<long long>(planned[i].last));
    report.append(row).append(w < 0 ? std::string("a constant") : program.launches[w].label);
    report += "\n";
  }
  return absl::OkStatus();
}

Status assignBuffers(runtime::Program &program, const std::vector<bool> *donatable,
                     const AssignmentRules &rules, std::string &report) {
  std::string pairs;
  donateArguments(program, donatable, rules, pairs);
  std::vector<int> into = reuseInPlace(program, rules, pairs);
  SINTER_RETURN_IF_ERROR(packArena(program, into, rules, report));
  report += pairs;
  return absl::OkStatus();
}

} // namespace sinter::planner
