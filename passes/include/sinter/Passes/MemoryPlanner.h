//===- MemoryPlanner.h - buffers to offsets in one arena --------*- C++ -*-===//
//
// Note [Planning memory]
// Every buffer of a program is live over an interval of its launches: from
// the launch that writes it to the last one that reads it. Buffers whose
// intervals overlap must not share bytes; the others may. The planner packs
// the buffers into one arena by XLA's "global decreasing size, best fit":
// buffers are placed largest first, each at the lowest offset where it fits
// between the buffers already placed whose lives overlap its own. The plan
// is known before anything runs, so the arena's size is the step's exact
// peak. Plain C++ with no MLIR: the memory-planning passes and their tests
// build on it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_MEMORYPLANNER_H
#define SINTER_PASSES_MEMORYPLANNER_H

#include <cstdint>
#include <string>
#include <vector>

namespace sinter::planner {

/// A buffer's size and the launches during which it is live (inclusive).
struct Live {
  int64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
};

struct Plan {
  std::vector<int64_t> offsets; // per buffer, a multiple of the alignment
  int64_t size = 0;             // the arena: the highest end of any buffer
};

/// Packs `buffers` into one arena, each offset a multiple of `alignment`.
Plan planBestFit(const std::vector<Live> &buffers, int64_t alignment = 64);

/// Checks that no two buffers live at the same time share a byte and that
/// every buffer lies inside the arena; returns "" or what is wrong.
std::string verifyPlan(const std::vector<Live> &buffers, const Plan &plan);

} // namespace sinter::planner

#endif // SINTER_PASSES_MEMORYPLANNER_H
