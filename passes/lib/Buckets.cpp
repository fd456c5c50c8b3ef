//===- Buckets.cpp - gradient buckets and their overlap with the step -----===//
//
// Note [Gradient buckets] in sinter/Passes/Buckets.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/Passes/Buckets.h"

#include "sinter/runtime/Communicator.h"
#include "sinter/runtime/Environment.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <string>

namespace sinter::planner {

using Step = runtime::Program::Step;

BucketOptions bucketOptionsFromEnvironment() {
  const runtime::Environment &env = runtime::environment();
  auto bytes = [](double mib) { return std::max<int64_t>(1, static_cast<int64_t>(mib * 1048576)); };
  return {.firstBucketBytes = bytes(env.first_bucket_mb),
          .bucketBytes = bytes(env.bucket_mb),
          .inFlight = env.buckets_in_flight};
}

namespace {

struct Bucket {
  std::vector<int> members; // launch indices of the all-reduces it merges
  int64_t bytes = 0;
  int start = 0; // the gap its start goes in: before launch `start`
  int done = 0;  // the gap its done goes in (>= start)
};

std::string sizeOf(int64_t bytes) {
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  char text[32];
  bool mib = bytes >= 1048576;
  std::snprintf(text, sizeof text, "%.1f %s",
                static_cast<double>(bytes) / (mib ? 1048576.0 : 1024.0), mib ? "MiB" : "KiB");
  return text;
}

} // namespace

std::vector<int> bucketCollectives(std::vector<Step> &launches,
                                   std::vector<runtime::Program::Buffer> &buffers,
                                   const BucketOptions &options) {
  const int n = static_cast<int>(launches.size());
  std::vector<int> origin(launches.size());
  for (int k = 0; k < n; ++k)
    origin[k] = k;
  // Each buffer's last writer and first reader among the other launches.
  std::vector<int> writer(buffers.size(), -1), firstReader(buffers.size(), n);
  std::vector<bool> reduced(buffers.size(), false);
  bool any = false, chained = false;
  for (int k = 0; k < n; ++k) {
    const Step &step = launches[k];
    if (step.kind == Step::Kind::AllReduce) {
      any = true;
      for (int b : step.outputs)
        reduced[b] = true;
      continue;
    }
    for (int b : step.outputs)
      writer[b] = k;
    for (int b : step.inputs)
      firstReader[b] = std::min(firstReader[b], k);
  }
  if (!any)
    return origin;
  for (const Step &step : launches)
    if (step.kind == Step::Kind::AllReduce)
      for (int b : step.inputs)
        chained = chained || reduced[b];

  // The other collectives (reduce-scatter, all-gather) start where they
  // stand: a bucket starts between the same two of them as its
  // all-reduces, so every rank starts its collectives in one order.
  int lastOther = -1;

  // Buckets, in the order the all-reduces come.
  std::vector<Bucket> buckets;
  for (int k = 0; k < n; ++k) {
    const Step &step = launches[k];
    if (step.collective() && step.kind != Step::Kind::AllReduce)
      lastOther = k;
    if (step.kind != Step::Kind::AllReduce)
      continue;
    int ready = -1, need = n;
    int64_t bytes = 0;
    for (int b : step.inputs) {
      ready = std::max(ready, writer[b]);
      bytes += buffers[b].bytes;
    }
    for (int b : step.outputs)
      need = std::min(need, firstReader[b]);
    // (Its start is before the next one anyway: so are its writers.)
    ready = std::max(ready, lastOther);
    // Chained all-reduces stay where they are, each waited for at once.
    if (chained)
      ready = k - 1, need = k;
    Bucket *open = buckets.empty() ? nullptr : &buckets.back();
    bool between = open != nullptr && lastOther > open->members.back();
    if (open != nullptr && !chained && !between) {
      const Step &first = launches[open->members.front()];
      int64_t cap = buckets.size() == 1 ? options.firstBucketBytes : options.bucketBytes;
      bool fits = first.reduce == step.reduce && first.elementType == step.elementType &&
                  first.phase == step.phase && open->bytes + bytes <= cap &&
                  std::max(open->start, ready + 1) <= std::min(open->done, need);
      if (fits) {
        open->members.push_back(k);
        open->bytes += bytes;
        open->start = std::max(open->start, ready + 1);
        open->done = std::min(open->done, need);
        continue;
      }
    }
    buckets.push_back({{k}, bytes, ready + 1, need});
  }

  // Each bucket's start and done.
  std::vector<Step> starts, dones;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const Bucket &bucket = buckets[i];
    const Step &first = launches[bucket.members.front()];
    Step start;
    start.kind = Step::Kind::AllReduce;
    start.reduce = first.reduce;
    start.elementType = first.elementType;
    start.phase = first.phase;
    start.label = "all_reduce " + std::string(runtime::reduceOpName(first.reduce)) + " bucket " +
                  std::to_string(i) + " of " + std::to_string(buckets.size()) + " (" +
                  std::to_string(bucket.members.size()) +
                  (bucket.members.size() == 1 ? " tensor, " : " tensors, ") + sizeOf(bucket.bytes) +
                  ")";
    Step finish = start;
    finish.kind = Step::Kind::AllReduceDone;
    std::vector<std::string> lines;
    for (int k : bucket.members) {
      const Step &member = launches[k];
      start.inputs.insert(start.inputs.end(), member.inputs.begin(), member.inputs.end());
      finish.outputs.insert(finish.outputs.end(), member.outputs.begin(), member.outputs.end());
      if (!member.lines.empty() &&
          std::find(lines.begin(), lines.end(), member.lines) == lines.end())
        lines.push_back(member.lines);
    }
    for (const std::string &line : lines)
      start.lines += (start.lines.empty() ? "" : ", ") + line;
    finish.lines = start.lines;
    int bucketBuffer = static_cast<int>(buffers.size());
    runtime::Program::Buffer &buffer = buffers.emplace_back();
    buffer.bytes = bucket.bytes;
    // The reduced tensors are checked for numerics, at the done.
    buffer.floats = runtime::Program::Buffer::Floats::None;
    buffer.phase = static_cast<uint8_t>(first.phase);
    start.outputs = {bucketBuffer};
    start.results = 1;
    finish.inputs = {bucketBuffer};
    finish.results = static_cast<int>(finish.outputs.size());
    starts.push_back(std::move(start));
    dones.push_back(std::move(finish));
  }

  // The launches again, with each bucket's start and done in its gaps.
  std::vector<Step> result;
  std::vector<int> resultOrigin;
  std::deque<size_t> pending; // started, not done
  std::vector<bool> started(buckets.size(), false), finished(buckets.size(), false);
  auto emit = [&](Step step) {
    result.push_back(std::move(step));
    resultOrigin.push_back(-1);
  };
  auto emitDone = [&](size_t i) {
    pending.erase(std::find(pending.begin(), pending.end(), i));
    finished[i] = true;
    emit(std::move(dones[i]));
  };
  auto emitDonesDue = [&](int gap) {
    for (size_t i = 0; i < buckets.size(); ++i)
      if (started[i] && !finished[i] && buckets[i].done == gap)
        emitDone(i);
  };
  for (int gap = 0; gap <= n; ++gap) {
    // The dones due here of buckets started before; then the starts due
    // here, each after the oldest done when too many are in flight; then
    // the dones due here of the buckets just started.
    emitDonesDue(gap);
    for (size_t i = 0; i < buckets.size(); ++i) {
      if (buckets[i].start != gap)
        continue;
      if (static_cast<int>(pending.size()) >= std::max(options.inFlight, 1))
        emitDone(pending.front());
      started[i] = true;
      pending.push_back(i);
      emit(std::move(starts[i]));
      if (options.inFlight == 0)
        emitDone(i);
    }
    emitDonesDue(gap);
    if (gap < n && launches[gap].kind != Step::Kind::AllReduce) {
      result.push_back(std::move(launches[gap]));
      resultOrigin.push_back(gap);
    }
  }
  launches = std::move(result);
  return resultOrigin;
}

} // namespace sinter::planner
