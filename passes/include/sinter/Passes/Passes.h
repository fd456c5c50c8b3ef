//===- Passes.h - Sinter's IR-to-IR passes ----------------------*- C++ -*-===//
#ifndef SINTER_PASSES_PASSES_H
#define SINTER_PASSES_PASSES_H

#include "sinter/Dialect/Sinter/SinterDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>
#include <utility>
#include <vector>

namespace sinter {

#define GEN_PASS_DECL
#include "sinter/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sinter/Passes/Passes.h.inc"

/// The (result, operand) pairs of a fusion whose result may be written into
/// the operand's memory (the compiler's rule, Note [In-place kernels] in
/// compiler/lib/Compiler/Pipeline.cpp).
using InPlaceRule =
    std::function<std::vector<std::pair<unsigned, unsigned>>(mlir::Operation *fusion)>;

/// sinter-rematerialize whose simulation counts a result written in place
/// over an input that dies at its kernel once, as the memory planner will
/// place them (without a rule, each in memory of its own: an overestimate
/// under which a budget traded more than it needed).
std::unique_ptr<mlir::Pass> createSinterRematerialize(const SinterRematerializeOptions &options,
                                                      InPlaceRule inPlace);

} // namespace sinter

#endif // SINTER_PASSES_PASSES_H
