//===- LibraryOps.cpp - the library ops' operands, as their kernels see them ===//
#include "LibraryOps.h"

using namespace mlir;
using namespace sinter::ir;

namespace sinter::codegen {

std::array<int64_t, 3> aroundAxis(ArrayRef<int64_t> shape, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return {outer, shape[axis], inner};
}

ConvolutionOperands convolutionOperands(Operation *op) {
  ConvolutionOperands c;
  auto attrs = [&](auto conv) {
    c.stride = conv.getStride(), c.padding = conv.getPadding(), c.dilation = conv.getDilation();
    c.groups = static_cast<int64_t>(conv.getGroups());
  };
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    attrs(conv);
    c.input = conv.getInput(), c.filter = conv.getFilter(), c.output = conv.getResult();
  } else if (auto conv = dyn_cast<Conv2dBackwardInputOp>(op)) {
    attrs(conv);
    c.input = conv.getResult(), c.filter = conv.getFilter(), c.output = conv.getGradOutput();
  } else {
    auto filterGradient = cast<Conv2dBackwardFilterOp>(op);
    attrs(filterGradient);
    c.input = filterGradient.getInput(), c.filter = filterGradient.getResult();
    c.output = filterGradient.getGradOutput();
  }
  return c;
}

PoolOperands poolOperands(Operation *op) {
  PoolOperands p;
  auto attrs = [&](auto pool) {
    p.kind = pool.getKind(), p.kernel = pool.getKernel(), p.stride = pool.getStride();
    p.padding = pool.getPadding();
  };
  if (auto backward = dyn_cast<Pool2dBackwardOp>(op)) {
    attrs(backward);
    // Operand 0: the input, operand 1: the output's gradient.
    p.input = op->getOperand(0), p.output = op->getOperand(1), p.backward = true;
  } else {
    attrs(cast<Pool2dOp>(op));
    p.input = op->getOperand(0), p.output = op->getResult(0);
  }
  return p;
}

} // namespace sinter::codegen
