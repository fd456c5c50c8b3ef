//===- MemoryPlanner.cpp - buffers to offsets in one arena ----------------===//
#include "sinter/Passes/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

namespace sinter::planner {
namespace {

bool overlapInTime(const Live &a, const Live &b) { return a.first <= b.last && b.first <= a.last; }

int64_t alignUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

} // namespace

Plan planBestFit(const std::vector<Live> &buffers, int64_t alignment) {
  Plan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by first use, then index, so the plan is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
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
    placed.push_back(b);
  }
  return plan;
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

} // namespace sinter::planner
