//===- LargestBatch.h - the largest batch whose plan fits ------*- C++ -*-===//
#ifndef SINTER_TOOLS_LARGESTBATCH_H
#define SINTER_TOOLS_LARGESTBATCH_H

#include "sinter/sinter.h"

#include <functional>
#include <string>

namespace sinter::tools {

/// The largest batch size whose first training step, planned by
/// `plan(batch)` (record a step and call plan_step; nothing runs), fits
/// `memoryBudget` bytes of step memory, or the system's available memory
/// with the inputs when the budget is 0 (Note [The largest batch that
/// fits]). Prints the choice after `what`; throws sinter::Error when not
/// even a batch of 1 fits.
int64_t largestBatch(const std::function<StepMemory(int64_t)> &plan, int64_t memoryBudget,
                     const std::string &what);

} // namespace sinter::tools

#endif // SINTER_TOOLS_LARGESTBATCH_H
