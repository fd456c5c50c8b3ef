//===- Phases.h - an op's part of the training step -------------*- C++ -*-===//
//
// The frontend names the lines of the backward pass and of the optimizer's
// updates (sinter::PhaseGuard); an op's phase is the latest among its
// locations (Note [Memory by category] in sinter/Passes/MemoryReport.h).
// Translation gives it to each launch and buffer; gradient buckets keep to
// one phase (Note [Gradient buckets] in sinter/Passes/Buckets.h), so the
// rematerialization pass's estimate asks it too.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_PHASES_H
#define SINTER_PASSES_PHASES_H

#include "sinter/runtime/Program.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

namespace sinter::passes {

inline runtime::Program::Step::Phase phaseOf(mlir::Operation &op) {
  using Phase = runtime::Program::Step::Phase;
  Phase phase = Phase::Forward;
  op.getLoc()->walk([&](mlir::Location inner) {
    if (auto name = mlir::dyn_cast<mlir::NameLoc>(inner)) {
      if (name.getName() == "update")
        phase = Phase::Update;
      else if (name.getName() == "backward" && phase == Phase::Forward)
        phase = Phase::Backward;
    }
    return mlir::WalkResult::advance();
  });
  return phase;
}

} // namespace sinter::passes

#endif // SINTER_PASSES_PHASES_H
