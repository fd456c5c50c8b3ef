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
#include "sinter/Passes/MemoryRules.h"

#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace sinter::passes {

/// The target's answers about each kernel (MemoryRules::kernel), asked once
/// per op: planning a fusion's kernel is the dear part of a simulation. The
/// owner forgets an op before it is erased (a pass's rewrite listener).
class KernelFacts {
public:
  explicit KernelFacts(const MemoryRules &rules) : rules_(rules) {}
  const MemoryRules &rules() const { return rules_; }
  /// What `kernel` takes beyond its results.
  const KernelMemory &of(mlir::Operation *kernel);
  void forget(mlir::Operation *op) { known_.erase(op); }
  /// `to` is a copy of `from`: what is known of one holds for the other.
  void copy(mlir::Operation *from, mlir::Operation *to) {
    if (auto it = known_.find(from); it != known_.end()) {
      KernelMemory memory = it->second; // inserting may move the entries
      known_[to] = std::move(memory);
    }
  }

private:
  const MemoryRules &rules_;
  llvm::DenseMap<mlir::Operation *, KernelMemory> known_;
};

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
/// cost nothing (canonicalization drops them). With `facts`, as buffer
/// assignment will see the translated Program (Note [One memory model] in
/// sinter/Passes/MemoryPlanner.h): the in-place pairs and scratch the target
/// gives each kernel, the offsets views are read at, its alignment and size
/// classes; without, every value only its bytes.
FunctionFlow dataflowOf(mlir::func::FuncOp function, KernelFacts *facts = nullptr);

/// Note [What the IR's dataflow does not know]
/// With the target's facts, the dataflow of a function is the Dataflow that
/// buffer assignment builds from its Program, donation included (donorsOf,
/// the same pairing of returned values with dead arguments), but for what
/// happens after the pass or outside the IR: (1) the canonicalizer after
/// rematerialization drops results nothing reads (here already of no
/// bytes) and erases kernels nothing reads (here their inputs are still
/// read by them); (2) materializing returned slices adds a copy for each
/// returned view that involves a slice (at most the bytes of those
/// returns); (3) here every argument may be donated, where the frontend may
/// say some may not (a returned update then takes arena bytes of its
/// size). None of them arises in the zoo's training steps: under every
/// budget of benchmarks/README.md the estimate is the planned arena to the
/// byte, and buffer assignment's plan is what the step runs with either way.
/// A data-parallel step's all-reduces are grouped into gradient buckets
/// here as translation groups them (Note [Gradient buckets] in
/// sinter/Passes/Buckets.h), each bucket's buffer live from its start to
/// its done, so the estimate holds for it too.

/// The bytes of a tensor value.
int64_t bytesOf(mlir::Value value);

} // namespace sinter::passes

#endif // SINTER_PASSES_LIB_DATAFLOW_H
