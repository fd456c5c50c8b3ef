//===- Passes.h - Sinter's IR-to-IR passes ----------------------*- C++ -*-===//
#ifndef SINTER_PASSES_PASSES_H
#define SINTER_PASSES_PASSES_H

#include "sinter/Dialect/Sinter/SinterDialect.h"
#include "sinter/Passes/FusionPolicy.h"
#include "sinter/Passes/MemoryRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace sinter {

#define GEN_PASS_DECL
#include "sinter/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sinter/Passes/Passes.h.inc"

namespace passes {

/// A function's attribute, one flag per argument: whether its memory may
/// take a returned value (Note [Donation] in sinter/Passes/BufferAssignment.h).
/// The compiler sets it for the passes; without it, every argument may.
inline constexpr llvm::StringLiteral kDonatableAttr = "sinter.donatable";

/// The rematerialization pass simulating the arena with the target's
/// `rules` (Note [One memory model] in sinter/Passes/MemoryPlanner.h).
std::unique_ptr<mlir::Pass> createSinterRematerialize(const SinterRematerializeOptions &options,
                                                      MemoryRules rules);

/// The fusion pass asking the target which ops it runs as library calls
/// (Note [Fusion asks the target] in sinter/Passes/FusionPolicy.h).
std::unique_ptr<mlir::Pass> createSinterFusion(const SinterFusionOptions &options,
                                               fusion::FusionRules rules);

} // namespace passes

} // namespace sinter

#endif // SINTER_PASSES_PASSES_H
