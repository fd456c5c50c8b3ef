//===- MemoryPlanner.cpp - buffers to offsets in one arena ----------------===//
#include "sinter/Passes/MemoryPlanner.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace sinter::planner {
namespace {

bool overlapInTime(const Live &a, const Live &b) { return a.first <= b.last && b.first <= a.last; }

int64_t alignUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

/// Every order planSmallest tries, Size first (it wins a tie).
constexpr PackingOrder kPackingOrders[] = {PackingOrder::Size, PackingOrder::Lifetime,
                                           PackingOrder::Area, PackingOrder::FirstUse};

} // namespace

const char *packingOrderName(PackingOrder order) {
  switch (order) {
  case PackingOrder::Size:
    return "size";
  case PackingOrder::Lifetime:
    return "lifetime";
  case PackingOrder::Area:
    return "area";
  case PackingOrder::FirstUse:
    return "first use";
  }
  return "?";
}

Plan planBestFit(const std::vector<Live> &buffers, int64_t alignment) {
  return planGreedy(buffers, PackingOrder::Size, alignment);
}

Plan planSmallest(const std::vector<Live> &buffers, int64_t alignment) {
  Plan best;
  for (PackingOrder order : kPackingOrders) {
    Plan plan = planGreedy(buffers, order, alignment);
    if (order == kPackingOrders[0] || plan.size < best.size)
      best = std::move(plan);
  }
  return best;
}

namespace {

/// planGreedy, stopping once the arena passes `limit` (the plan is then
/// incomplete, its size over `limit`).
Plan packGreedy(const std::vector<Live> &buffers, PackingOrder packing, int64_t alignment,
                int64_t limit) {
  Plan plan;
  plan.order = packing;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](size_t b) -> std::pair<int64_t, int64_t> {
    int64_t launches = buffers[b].last - buffers[b].first + 1, bytes = buffers[b].bytes;
    switch (packing) {
    case PackingOrder::Size:
      return {bytes, 0};
    case PackingOrder::Lifetime:
      return {launches, bytes};
    case PackingOrder::Area:
      return {bytes * launches, 0};
    case PackingOrder::FirstUse:
      return {-buffers[b].first, bytes};
    }
    return {0, 0};
  };
  // The highest key first; ties by first use, then index (a stable sort).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (key(a) != key(b))
      return key(a) > key(b);
    return buffers[a].first < buffers[b].first;
  });
  struct Placed {
    int64_t offset, end;
  };
  std::vector<size_t> placed;
  std::vector<Placed> taken;
  for (size_t b : order) {
    int64_t size = alignUp(std::max<int64_t>(buffers[b].bytes, 1), alignment);
    // The byte ranges of placed buffers whose lives overlap this one's.
    taken.clear();
    for (size_t p : placed)
      if (overlapInTime(buffers[b], buffers[p]))
        taken.push_back(
            {plan.offsets[p],
             plan.offsets[p] + alignUp(std::max<int64_t>(buffers[p].bytes, 1), alignment)});
    std::sort(taken.begin(), taken.end(),
              [](const Placed &x, const Placed &y) { return x.offset < y.offset; });
    // Best fit: the smallest gap that holds it; else after the last.
    int64_t best = -1, bestGap = 0, cursor = 0;
    for (const Placed &t : taken) {
      if (t.offset > cursor) {
        int64_t gap = t.offset - cursor;
        if (gap >= size && (best < 0 || gap < bestGap)) {
          best = cursor;
          bestGap = gap;
        }
      }
      cursor = std::max(cursor, t.end);
    }
    plan.offsets[b] = best >= 0 ? best : cursor;
    plan.size = std::max(plan.size, plan.offsets[b] + size);
    if (plan.size > limit)
      break;
    placed.push_back(b);
  }
  return plan;
}

} // namespace

Plan planGreedy(const std::vector<Live> &buffers, PackingOrder packing, int64_t alignment) {
  return packGreedy(buffers, packing, alignment, INT64_MAX);
}

std::string verifyPlan(const std::vector<Live> &buffers, const Plan &plan) {
  if (plan.offsets.size() != buffers.size())
    return "the plan has " + std::to_string(plan.offsets.size()) + " offsets for " +
           std::to_string(buffers.size()) + " buffers";
  for (size_t a = 0; a < buffers.size(); ++a) {
    if (plan.offsets[a] < 0 || plan.offsets[a] + buffers[a].bytes > plan.size)
      return "buffer " + std::to_string(a) + " lies outside the arena";
    for (size_t b = a + 1; b < buffers.size(); ++b) {
      if (buffers[a].bytes == 0 || buffers[b].bytes == 0 || !overlapInTime(buffers[a], buffers[b]))
        continue;
      bool apart = plan.offsets[a] + buffers[a].bytes <= plan.offsets[b] ||
                   plan.offsets[b] + buffers[b].bytes <= plan.offsets[a];
      if (!apart)
        return "buffers " + std::to_string(a) + " and " + std::to_string(b) +
               " are live at the same time and overlap";
    }
  }
  return "";
}

namespace {

bool donatedValue(const Dataflow &flow, size_t v) {
  return v < flow.donated.size() && flow.donated[v];
}

/// Per value, whether a kernel of `order` writes it.
std::vector<bool> writtenIn(const Dataflow &flow, const std::vector<int> &order) {
  std::vector<bool> written(flow.bytes.size(), false);
  for (int k : order)
    for (int v : flow.kernels[k].writes)
      written[v] = true;
  return written;
}

} // namespace

bool mayWriteOver(const Dataflow::Kernel &kernel, int input, unsigned result) {
  for (size_t j = 0; j < kernel.reads.size(); ++j)
    if (kernel.reads[j] == input &&
        ((!kernel.readOffsets.empty() && kernel.readOffsets[j] != 0) ||
         std::find(kernel.inPlace.begin(), kernel.inPlace.end(),
                   std::make_pair(static_cast<unsigned>(j), result)) == kernel.inPlace.end()))
      return false;
  return true;
}

std::vector<int> writtenOver(const Dataflow &flow, const std::vector<int> &order) {
  size_t n = flow.bytes.size();
  std::vector<int> into(n, -1);
  if (std::none_of(order.begin(), order.end(),
                   [&](int k) { return !flow.kernels[k].inPlace.empty(); }))
    return into; // nothing may be written over anything
  std::vector<int64_t> lastReader(n, -1);
  for (size_t k = 0; k < order.size(); ++k)
    for (int v : flow.kernels[order[k]].reads)
      lastReader[v] = static_cast<int64_t>(k);
  // A constant is filled before each run: not a kernel's to write over.
  std::vector<bool> taken = writtenIn(flow, order);
  for (size_t v = 0; v < n; ++v)
    taken[v] = !taken[v] && !flow.argument[v];
  auto callers = [&](int v) { return flow.argument[v] || flow.returned[v]; };
  for (size_t k = 0; k < order.size(); ++k) {
    const Dataflow::Kernel &kernel = flow.kernels[order[k]];
    size_t results =
        kernel.results < 0 ? kernel.writes.size() : static_cast<size_t>(kernel.results);
    for (size_t r = 0; r < results; ++r) {
      int out = kernel.writes[r];
      if (callers(out) || into[out] >= 0)
        continue;
      for (size_t i = 0; i < kernel.reads.size() && into[out] < 0; ++i) {
        int in = kernel.reads[i];
        if (callers(in) || taken[in] || lastReader[in] != static_cast<int64_t>(k) ||
            flow.bytes[in] != flow.bytes[out] ||
            std::count(kernel.writes.begin(), kernel.writes.end(), in) > 0 ||
            !mayWriteOver(kernel, in, static_cast<unsigned>(r)))
          continue;
        into[out] = in;
        taken[in] = true;
      }
    }
  }
  return into;
}

std::vector<size_t> byFirstWriter(const std::vector<int> &values, const std::vector<int> &writer) {
  std::vector<size_t> positions(values.size());
  std::iota(positions.begin(), positions.end(), size_t{0});
  std::stable_sort(positions.begin(), positions.end(),
                   [&](size_t x, size_t y) { return writer[values[x]] < writer[values[y]]; });
  return positions;
}

std::vector<int> donorsOf(const Dataflow &flow, const std::vector<int> &arguments,
                          const std::vector<int> &results, const std::vector<bool> *donatable) {
  size_t n = flow.bytes.size();
  std::vector<int> donors(results.size(), -1), writer(n, -1), lastReader(n, -1);
  for (size_t k = 0; k < flow.kernels.size(); ++k) {
    size_t written = flow.kernels[k].results < 0 ? flow.kernels[k].writes.size()
                                                 : static_cast<size_t>(flow.kernels[k].results);
    for (size_t w = 0; w < written; ++w)
      if (int v = flow.kernels[k].writes[w]; writer[v] < 0)
        writer[v] = static_cast<int>(k);
    for (int v : flow.kernels[k].reads)
      lastReader[v] = static_cast<int>(k);
  }
  std::vector<bool> isArgument(n, false), taken(arguments.size(), false), returned(n, false);
  for (int v : arguments)
    isArgument[v] = true;
  // An argument the step also returns is copied out after the run: its
  // memory must still hold it then.
  for (size_t a = 0; a < arguments.size(); ++a)
    taken[a] = std::find(results.begin(), results.end(), arguments[a]) != results.end();
  // Results in the order they are written: an argument free by one result's
  // writer is free for every later one, so pairing the earliest first never
  // takes an argument from a result that alone could use it (taking them in
  // return order left an update written early, before its own argument's
  // peers were dead, with nothing to write into).
  for (size_t r : byFirstWriter(results, writer)) {
    int value = results[r], w = writer[value];
    bool again = returned[value];
    returned[value] = true;
    if (isArgument[value] || w < 0 || again)
      continue; // returned as is, or a second time (a copy)
    const std::vector<int> &writes = flow.kernels[w].writes;
    auto own =
        static_cast<unsigned>(std::find(writes.begin(), writes.end(), value) - writes.begin());
    for (size_t a = 0; a < arguments.size(); ++a) {
      int input = arguments[a];
      if ((donatable && (a >= donatable->size() || !(*donatable)[a])) || taken[a] ||
          flow.bytes[input] != flow.bytes[value] || lastReader[input] > w)
        continue;
      if (lastReader[input] < w || mayWriteOver(flow.kernels[w], input, own)) {
        donors[r] = static_cast<int>(a);
        taken[a] = true;
        break;
      }
    }
  }
  return donors;
}

Lifetimes lifetimesOf(const Dataflow &flow, const std::vector<int> &order,
                      const std::vector<int> &into) {
  size_t n = flow.bytes.size();
  int64_t end = static_cast<int64_t>(order.size());
  std::vector<bool> written = writtenIn(flow, order);
  // The caller's: arguments, results written into an argument's memory, and
  // empty results (nothing to hold).
  std::vector<bool> external(n);
  Lifetimes lifetimes;
  lifetimes.live.assign(n, {0, end, -1});
  for (size_t v = 0; v < n; ++v) {
    external[v] = flow.argument[v] || donatedValue(flow, v) ||
                  (flow.returned[v] && !flow.resultsInArena) ||
                  (flow.returned[v] && written[v] && flow.bytes[v] == 0);
    // A result handed out of the arena keeps its size class.
    bool handedOut = flow.returned[v] && written[v] && !external[v];
    lifetimes.live[v].bytes =
        handedOut && flow.allocationSize ? flow.allocationSize(flow.bytes[v]) : flow.bytes[v];
  }
  std::vector<Live> &live = lifetimes.live;
  for (int64_t k = 0; k < end; ++k) {
    const Dataflow::Kernel &kernel = flow.kernels[order[k]];
    for (int v : kernel.writes)
      live[v].first = std::min(live[v].first, k), live[v].last = std::max(live[v].last, k);
    for (int v : kernel.reads) {
      live[v].last = std::max(live[v].last, k);
      if (!written[v]) // a constant: from its first reader
        live[v].first = std::min(live[v].first, k);
    }
  }
  // A value written over another (Note [In-place kernels]) is part of that
  // one's life; `root` follows the chain.
  auto root = [&](int v) {
    while (into[v] >= 0)
      v = into[v];
    return v;
  };
  for (size_t v = 0; v < n; ++v)
    if (into[v] >= 0) {
      int r = root(static_cast<int>(v));
      live[r].last = std::max({live[r].last, live[v].last, live[v].first});
    }
  for (size_t v = 0; v < n; ++v) {
    if (external[v] || into[v] >= 0)
      continue;
    if (flow.returned[v]) // to the end of the step (Note [Results in the arena])
      live[v].last = end;
    if (live[v].last < live[v].first) // never read: live while written
      live[v].last = live[v].first;
    if (flow.bytes[v] > 0)
      lifetimes.held.push_back(static_cast<int>(v));
  }
  return lifetimes;
}

namespace {

/// The lifetimes of `flow`'s values in `order`, each written over what
/// writtenOver allows.
Lifetimes lifetimesIn(const Dataflow &flow, const std::vector<int> &order) {
  return lifetimesOf(flow, order, writtenOver(flow, order));
}

std::vector<int64_t> liveBytesOf(const Dataflow &flow, const std::vector<int> &order,
                                 const Lifetimes &lifetimes) {
  std::vector<int64_t> delta(order.size() + 2, 0);
  for (int v : lifetimes.held) {
    const Live &live = lifetimes.live[v];
    int64_t bytes = alignUp(live.bytes, flow.alignment);
    delta[live.first] += bytes;
    delta[live.last + 1] -= bytes;
  }
  std::vector<int64_t> live(order.size(), 0);
  int64_t running = 0;
  for (size_t k = 0; k < order.size(); ++k)
    live[k] = running += delta[k];
  return live;
}

int64_t livePeak(const Dataflow &flow, const std::vector<int> &order, const Lifetimes &lifetimes) {
  std::vector<int64_t> live = liveBytesOf(flow, order, lifetimes);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

} // namespace

std::vector<int64_t> liveBytes(const Dataflow &flow, const std::vector<int> &order) {
  return liveBytesOf(flow, order, lifetimesIn(flow, order));
}

int64_t simulatedPeak(const Dataflow &flow, const std::vector<int> &order) {
  return livePeak(flow, order, lifetimesIn(flow, order));
}

namespace {

std::vector<Live> heldBuffers(const Lifetimes &lifetimes) {
  std::vector<Live> buffers;
  buffers.reserve(lifetimes.held.size());
  for (int v : lifetimes.held)
    buffers.push_back(lifetimes.live[v]);
  return buffers;
}

} // namespace

int64_t packedArena(const Dataflow &flow, const std::vector<int> &order) {
  Lifetimes lifetimes = lifetimesIn(flow, order);
  return planSmallest(heldBuffers(lifetimes), flow.alignment).size;
}

bool fitsArena(const Dataflow &flow, const std::vector<int> &order, int64_t limit) {
  Lifetimes lifetimes = lifetimesIn(flow, order);
  if (livePeak(flow, order, lifetimes) > limit) // packing only adds to it
    return false;
  std::vector<Live> buffers = heldBuffers(lifetimes);
  for (PackingOrder packing : kPackingOrders)
    if (packGreedy(buffers, packing, flow.alignment, limit).size <= limit)
      return true;
  return false;
}

std::vector<int> scheduleForMemory(const Dataflow &flow) {
  size_t n = flow.bytes.size(), count = flow.kernels.size();
  std::vector<int> original(count);
  std::iota(original.begin(), original.end(), 0);
  // Writers and readers of each value; kernels wait for their inputs' writers.
  std::vector<int> writer(n, -1), readersLeft(n, 0), waiting(count, 0);
  std::vector<std::vector<int>> readers(n), reads(count);
  for (size_t k = 0; k < count; ++k) {
    for (int v : flow.kernels[k].writes)
      if (writer[v] < 0)
        writer[v] = static_cast<int>(k);
    reads[k] = flow.kernels[k].reads;
    std::sort(reads[k].begin(), reads[k].end());
    reads[k].erase(std::unique(reads[k].begin(), reads[k].end()), reads[k].end());
  }
  std::vector<std::vector<int>> successors(count);
  for (size_t k = 0; k < count; ++k) {
    for (int v : reads[k]) {
      ++readersLeft[v];
      readers[v].push_back(static_cast<int>(k));
      if (writer[v] >= 0 && writer[v] != static_cast<int>(k))
        ++waiting[k];
    }
    for (int before : flow.kernels[k].after)
      if (before != static_cast<int>(k)) {
        successors[before].push_back(static_cast<int>(k));
        ++waiting[k];
      }
  }
  std::vector<int> ready, order;
  for (size_t k = 0; k < count; ++k)
    if (waiting[k] == 0)
      ready.push_back(static_cast<int>(k));
  auto costs = [&](int v) { return !flow.argument[v] && !donatedValue(flow, v); };
  // Collectives first, readers of their results last (Note [Scheduling for
  // memory]); the others by the bytes they free.
  bool collectives = false;
  std::vector<int> rank(count, 1);
  for (size_t k = 0; k < count; ++k)
    if (flow.kernels[k].collective) {
      collectives = true;
      rank[k] = 0;
      for (int v : flow.kernels[k].writes)
        for (int r : readers[v])
          if (!flow.kernels[r].collective)
            rank[r] = 2;
    }
  while (!ready.empty()) {
    // Of the ready kernels of the first rank, the one freeing the most
    // bytes net of what it allocates.
    int first = rank[ready.front()];
    for (int k : ready)
      first = std::min(first, rank[k]);
    size_t best = ready.size();
    int64_t bestGain = 0;
    for (size_t i = 0; i < ready.size(); ++i) {
      if (rank[ready[i]] != first)
        continue;
      const Dataflow::Kernel &kernel = flow.kernels[ready[i]];
      int64_t gain = 0;
      for (int v : kernel.writes)
        if (writer[v] == ready[i] && costs(v))
          gain -= flow.bytes[v];
      for (int v : reads[ready[i]]) // a returned value lives on after its last reader
        if (costs(v) && !flow.returned[v] && readersLeft[v] == 1)
          gain += flow.bytes[v];
      if (best == ready.size() || gain > bestGain || (gain == bestGain && ready[i] < ready[best]))
        best = i, bestGain = gain;
    }
    int k = ready[best];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
    order.push_back(k);
    for (int v : reads[k])
      --readersLeft[v];
    for (int v : flow.kernels[k].writes) {
      if (writer[v] != k)
        continue;
      for (int r : readers[v])
        if (r != k && --waiting[r] == 0)
          ready.push_back(r);
    }
    for (int r : successors[k])
      if (--waiting[r] == 0)
        ready.push_back(r);
  }
  if (order.size() != count) // a cycle: not a program; keep it as it is
    return original;
  // The original order is kept on a tie, if it runs updates after the
  // readers of what they replace.
  bool originalWaits = true;
  for (size_t k = 0; k < count; ++k)
    for (int before : flow.kernels[k].after)
      originalWaits = originalWaits && before < static_cast<int>(k);
  return collectives || !originalWaits || simulatedPeak(flow, order) < simulatedPeak(flow, original)
             ? order
             : original;
}

} // namespace sinter::planner
