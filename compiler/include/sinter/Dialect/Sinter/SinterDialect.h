//===- SinterDialect.h - the sinter dialect ---------------------*- C++ -*-===//
#ifndef SINTER_DIALECT_SINTER_SINTERDIALECT_H
#define SINTER_DIALECT_SINTER_SINTERDIALECT_H

#include "mlir/IR/Dialect.h"

#include "sinter/Dialect/Sinter/SinterOpsDialect.h.inc"

#endif // SINTER_DIALECT_SINTER_SINTERDIALECT_H
