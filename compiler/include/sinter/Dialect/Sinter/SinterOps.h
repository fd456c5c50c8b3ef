//===- SinterOps.h - the sinter dialect's operations ------------*- C++ -*-===//
#ifndef SINTER_DIALECT_SINTER_SINTEROPS_H
#define SINTER_DIALECT_SINTER_SINTEROPS_H

#include "sinter/Dialect/Sinter/SinterDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "sinter/Dialect/Sinter/SinterOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "sinter/Dialect/Sinter/SinterOpsAttributes.h.inc"

namespace sinter::ir {
// The shared assembly form and verifier of elementwise unary and binary ops
// (see Note [Explicit broadcasting] in SinterOps.cpp).
mlir::ParseResult parseElementwiseOp(mlir::OpAsmParser &parser, mlir::OperationState &result);
void printElementwiseOp(mlir::OpAsmPrinter &printer, mlir::Operation *op);
mlir::LogicalResult verifyElementwiseOp(mlir::Operation *op);
} // namespace sinter::ir

#define GET_OP_CLASSES
#include "sinter/Dialect/Sinter/SinterOps.h.inc"

namespace sinter::ir {
/// The element offset of `slice` in its operand when the elements it
/// selects are contiguous in row-major order (unit steps; every dim after
/// the first partial one taken whole, every dim before it of extent one):
/// such a slice outside a fusion is a view at that offset. Else -1.
int64_t contiguousOffset(SliceOp slice);
} // namespace sinter::ir

#endif // SINTER_DIALECT_SINTER_SINTEROPS_H
