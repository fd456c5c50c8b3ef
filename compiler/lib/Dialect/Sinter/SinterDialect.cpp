//===- SinterDialect.cpp - the sinter dialect -----------------------------===//
#include "sinter/Dialect/Sinter/SinterDialect.h"

#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace sinter::ir;

#include "sinter/Dialect/Sinter/SinterOpsDialect.cpp.inc"
#include "sinter/Dialect/Sinter/SinterOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "sinter/Dialect/Sinter/SinterOpsAttributes.cpp.inc"

void SinterDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "sinter/Dialect/Sinter/SinterOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "sinter/Dialect/Sinter/SinterOpsAttributes.cpp.inc"
      >();
}

Operation *SinterDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}
