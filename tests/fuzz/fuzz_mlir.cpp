//===- fuzz_mlir.cpp - IR through the parser, the verifier and the passes -===//
//
// Any text as a module of the sinter, func and arith dialects: parsed,
// verified, and, when it verifies, run through the whole pass pipeline
// (sinter-pipeline). Diagnostics are the expected refusals; a crash or an
// assertion in a verifier or a pass on IR that verified is a bug.
//
//===----------------------------------------------------------------------===//
#include "sinter/Dialect/Sinter/SinterDialect.h"
#include "sinter/Passes/PassPipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::DialectRegistry registry;
  registry.insert<sinter::ir::SinterDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  // MLIR's lexer stops at a NUL, as files it reads end with one: so does
  // a std::string's buffer.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(llvm::StringRef(text.c_str(), size), &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::PassManager pm(&context);
  sinter::passes::buildPipeline(pm);
  (void)pm.run(*module);
  return 0;
}
