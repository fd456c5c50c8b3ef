//===- Dataflow.h - a function's kernels over values (planner's view) -----===//
//
// The scheduling and rematerialization passes see a function's top-level ops
// as the memory planner does (Note [Scheduling for memory] in
// sinter/Passes/MemoryPlanner.h): kernels (fusions and library calls) over
// values. A top-level reshape or slice is a view (the runtime gives it its
// operand's buffer, a slice at an offset), so it is the same value as its
// operand; constants are values no kernel writes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_LIB_DATAFLOW_H
#define SINTER_PASSES_LIB_DATAFLOW_H

#include "sinter/Passes/MemoryPlanner.h"

#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace sinter::passes {

struct FunctionFlow {
  planner::Dataflow flow;
  llvm::SmallVector<mlir::Operation *> kernels; // flow.kernels[k] is kernels[k]
  llvm::DenseMap<mlir::Value, int> valueOf;     // every tensor value, views included
};

/// Whether a top-level op is a kernel (not a constant, a view or the return).
inline bool isKernel(mlir::Operation *op) {
  return !mlir::isa<ir::ConstantOp, ir::ReshapeOp, ir::SliceOp, mlir::func::ReturnOp>(op);
}

/// Whether a top-level op is a view of its operand's buffer (a reshape, or
/// a contiguous slice at an offset).
inline bool isView(mlir::Operation *op) { return mlir::isa<ir::ReshapeOp, ir::SliceOp>(op); }

/// The function's kernels in their current order. Results nothing reads
/// cost nothing (canonicalization drops them).
FunctionFlow dataflowOf(mlir::func::FuncOp function);

/// The bytes of a tensor value.
int64_t bytesOf(mlir::Value value);

} // namespace sinter::passes

#endif // SINTER_PASSES_LIB_DATAFLOW_H
