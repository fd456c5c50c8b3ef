//===- ProgramTranslation.h - a planned module as runtime Programs -*- C++ -*-===//
//
// After the pass pipeline, each function of the module is a sequence of
// kernels (fusions and library calls), splat constants and views (reshapes,
// contiguous slices). Translation turns one into a runtime::Program: a buffer
// per value (a view shares its operand's, at an offset), a fill step per
// constant (before its first reader), a launch per kernel with its label
// and training phase, the signature (Note [The step's signature]); buffer
// assignment (sinter/Passes/BufferAssignment.h) then gives the buffers their
// places, by the target's rules.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_COMPILER_PROGRAMTRANSLATION_H
#define SINTER_COMPILER_PROGRAMTRANSLATION_H

#include "sinter/Codegen/Target.h"
#include "sinter/runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace sinter::compiler {

/// The user's line an op came from ("model.cpp:40"), or "".
std::string userLine(mlir::Location loc);

/// Every user line in `loc` (a fused location holds several), distinct, in
/// order: "model.cpp:40, model.cpp:42".
std::string userLines(mlir::Location loc);

/// A launch's label in profiles and memory reports (Note [Kernel profile]
/// in sinter/runtime/Program.h): the op, or a fusion's first ops, its first
/// result's shape, and the user's line: "fusion(sub,exp,+3) f32[8x128] <- model.cpp:40".
std::string launchLabel(mlir::Operation &op);

/// `function`'s launches over buffers, in the kernels' order, and each
/// launch's op; buffers are not placed yet (offsets -1, no donors). Kernels
/// are numbered across the module as `kernels` numbers them: `kernel` is the
/// number of the function's first kernel and is advanced past its last.
/// Fails with a diagnostic at the op that no kernel of `target` runs.
mlir::LogicalResult translateToProgram(mlir::func::FuncOp function,
                                       const codegen::Target &target,
                                       const codegen::RenderedKernels &kernels, int &kernel,
                                       runtime::Program &program,
                                       std::vector<mlir::Operation *> &launchOps);

/// translateToProgram, then buffer assignment by the target's rules:
/// results paired with the `donatable` arguments (per argument; null: none),
/// in-place reuse and the arena. The plan as text goes to `planReport`.
mlir::LogicalResult planFunction(mlir::func::FuncOp function, const codegen::Target &target,
                                 const codegen::RenderedKernels &kernels, int &kernel,
                                 const std::vector<bool> *donatable, runtime::Program &program,
                                 std::string &planReport);

/// A Program as text, for lit tests and debug dumps: its buffers (bytes,
/// offset), steps in order (fills, launches with kernel, label, inputs and
/// outputs, copies), signature (arguments, results with their donors and
/// whether they are in the arena; each value's name, role, dtype and shape)
/// and the arena's size. sinter/runtime/ProgramFile.h writes it whole.
std::string formatProgram(const runtime::Program &program);

} // namespace sinter::compiler

#endif // SINTER_COMPILER_PROGRAMTRANSLATION_H
