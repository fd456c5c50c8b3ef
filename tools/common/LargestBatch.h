//===- LargestBatch.h - the largest batch whose plan fits ------*- C++ -*-===//
#ifndef SINTER_TOOLS_LARGESTBATCH_H
#define SINTER_TOOLS_LARGESTBATCH_H

#include "sinter/sinter.h"

#include <functional>
#include <string>

namespace sinter::tools {

/// Gives `optimizer` the state a step after the first finds (each
/// parameter's moments, zeros, and one step taken) and computes the
/// parameters and that state (one mark_step: initialisation, not a training
/// step). The step recorded next is then the steady step, the one every step
/// after the first runs: parameters and moments are its inputs, updated in
/// place (the first step also allocates the moments).
void enterSteadyState(optim::Adam &optimizer);

/// The largest batch size whose steady training step, planned by
/// `plan(batch)` (enterSteadyState, record a step and call plan_step; no
/// step runs), fits
/// `memoryBudget` bytes of step memory, or the system's available memory
/// with the inputs when the budget is 0 (Note [The largest batch that
/// fits]). Prints the choice after `what`; throws sinter::Error when not
/// even a batch of 1 fits.
int64_t largestBatch(const std::function<StepMemory(int64_t)> &plan, int64_t memoryBudget,
                     const std::string &what);

} // namespace sinter::tools

#endif // SINTER_TOOLS_LARGESTBATCH_H
