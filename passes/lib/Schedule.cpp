//===- Schedule.cpp - order a function's kernels to lower peak memory -----===//
//
// Note [Scheduling for memory] (sinter/Passes/MemoryPlanner.h) decides the
// order; this pass applies it to the function's top-level ops: kernels in
// the new order, constants first (the runtime fills each just before its
// first reader, so their place costs nothing), each view right after the
// value it views.
//
//===----------------------------------------------------------------------===//
#include "Dataflow.h"

#include "sinter/Passes/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERSCHEDULE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace {

struct Schedule : sinter::impl::SinterScheduleBase<Schedule> {
  using SinterScheduleBase::SinterScheduleBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (!function.getBody().hasOneBlock())
      return;
    sinter::passes::FunctionFlow flow = sinter::passes::dataflowOf(function);
    std::vector<int> order = sinter::planner::scheduleForMemory(flow.flow);
    bool same = true;
    for (size_t k = 0; k < order.size(); ++k)
      same = same && order[k] == static_cast<int>(k);
    if (same)
      return;
    Block &body = function.getBody().front();
    Operation *ret = body.getTerminator();
    SmallVector<Operation *> constants;
    for (Operation &op : body)
      if (isa<sinter::ir::ConstantOp>(op))
        constants.push_back(&op);
    for (Operation *op : constants)
      op->moveBefore(ret);
    llvm::SmallPtrSet<Operation *, 16> placed;
    // A view goes after what it views, once that is placed.
    std::function<void(Value)> placeViewsOf = [&](Value value) {
      for (Operation *user : value.getUsers())
        if (sinter::passes::isView(user) && user->getParentOp() == function.getOperation() &&
            placed.insert(user).second) {
          user->moveBefore(ret);
          placeViewsOf(user->getResult(0));
        }
    };
    for (BlockArgument arg : function.getArguments())
      placeViewsOf(arg);
    for (Operation *op : constants)
      placeViewsOf(op->getResult(0));
    for (int k : order) {
      Operation *op = flow.kernels[k];
      op->moveBefore(ret);
      for (Value result : op->getResults())
        placeViewsOf(result);
    }
  }
};

} // namespace
