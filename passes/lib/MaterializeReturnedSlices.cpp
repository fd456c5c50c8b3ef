//===- MaterializeReturnedSlices.cpp - returned views get their own buffer -===//
//
// The runtime hands each result to the caller as a block of its own (Note
// [Results in the arena] in sinter/runtime/Program.h); a slice outside a
// fusion is a view at an offset into a larger buffer, which cannot be handed
// out alone. So a returned chain of views that involves a slice is computed
// by a fusion that copies it.
//
//===----------------------------------------------------------------------===//
#include "sinter/Passes/Passes.h"
#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/STLExtras.h"

namespace sinter {
#define GEN_PASS_DEF_SINTERMATERIALIZERETURNEDSLICES
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace {

struct MaterializeReturnedSlices
    : sinter::impl::SinterMaterializeReturnedSlicesBase<MaterializeReturnedSlices> {
  using SinterMaterializeReturnedSlicesBase::SinterMaterializeReturnedSlicesBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.getBody().empty())
      return;
    Operation *ret = function.getBody().front().getTerminator();
    for (OpOperand &operand : ret->getOpOperands()) {
      // The chain of views from the returned value down to a computed one.
      SmallVector<Operation *> chain;
      Value base = operand.get();
      bool sliced = false;
      while (Operation *def = base.getDefiningOp()) {
        if (!isa<sinter::ir::ReshapeOp, sinter::ir::SliceOp>(def))
          break;
        sliced = sliced || isa<sinter::ir::SliceOp>(def);
        chain.push_back(def);
        base = def->getOperand(0);
      }
      if (!sliced)
        continue;
      OpBuilder builder(ret);
      auto fusion = builder.create<sinter::ir::FusionOp>(ret->getLoc(), operand.get().getType(),
                                                         ValueRange{base});
      Block *body = builder.createBlock(&fusion.getBody(), {}, {base.getType()}, {base.getLoc()});
      IRMapping map;
      map.map(base, body->getArgument(0));
      for (Operation *view : llvm::reverse(chain))
        builder.clone(*view, map);
      builder.create<sinter::ir::YieldOp>(ret->getLoc(), map.lookup(operand.get()));
      operand.set(fusion.getResult(0));
    }
  }
};

} // namespace
