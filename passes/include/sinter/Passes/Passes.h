//===- Passes.h - Sinter's IR-to-IR passes ----------------------*- C++ -*-===//
#ifndef SINTER_PASSES_PASSES_H
#define SINTER_PASSES_PASSES_H

#include "sinter/Dialect/Sinter/SinterDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace sinter {

#define GEN_PASS_DECL
#include "sinter/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "sinter/Passes/Passes.h.inc"

} // namespace sinter

#endif // SINTER_PASSES_PASSES_H
