//===- Phases.h - an op's part of the training step; a collective's step -===//
//
// The frontend names the lines of the backward pass and of the optimizer's
// updates (sinter::PhaseGuard); an op's phase is the latest among its
// locations (Note [Memory by category] in sinter/Passes/MemoryReport.h).
// Translation gives it to each launch and buffer; gradient buckets keep to
// one phase (Note [Gradient buckets] in sinter/Passes/Buckets.h), so the
// rematerialization pass's estimate asks it too, and makes a collective's
// step as translation does (collectiveStepOf), so that both bucket the same
// steps.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_PHASES_H
#define SINTER_PASSES_PHASES_H

#include "sinter/Dialect/Sinter/SinterOps.h"
#include "sinter/runtime/Communicator.h"
#include "sinter/runtime/Program.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

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

/// The dialect's name of a tensor's element type ("f32", "bool").
inline std::string dtypeName(mlir::Type type) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(type).getElementType();
  if (element.isInteger(1))
    return "bool";
  std::string name;
  llvm::raw_string_ostream os(name);
  os << element;
  return name;
}

/// The step of collective `op` (sinter.all_reduce, reduce_scatter or
/// all_gather): its kind, reduction, ranks, element type and phase, without
/// buffers; an InvalidArgument Status for an element type collectives do not
/// carry (named).
inline StatusOr<runtime::Program::Step> collectiveStepOf(mlir::Operation &op) {
  using Kind = runtime::Program::Step::Kind;
  runtime::Program::Step step;
  if (auto reduce = mlir::dyn_cast<ir::AllReduceOp>(op)) {
    step.kind = Kind::AllReduce;
    step.reduce = static_cast<runtime::ReduceOp>(reduce.getReduction());
  } else if (auto scatter = mlir::dyn_cast<ir::ReduceScatterOp>(op)) {
    step.kind = Kind::ReduceScatter;
    step.reduce = static_cast<runtime::ReduceOp>(scatter.getReduction());
    step.ranks = static_cast<int>(scatter.getRanks());
  } else {
    step.kind = Kind::AllGather;
    step.ranks = static_cast<int>(mlir::cast<ir::AllGatherOp>(op).getRanks());
  }
  std::string dtype = dtypeName(op.getOperand(0).getType());
  StatusOr<runtime::ElementType> element = runtime::elementTypeNamed(dtype);
  if (!element.ok())
    return absl::InvalidArgumentError(op.getName().stripDialect().str() + " of " + dtype +
                                      " elements is not supported");
  step.elementType = *element;
  step.phase = phaseOf(op);
  return step;
}

} // namespace sinter::passes

#endif // SINTER_PASSES_PHASES_H
