//===- sinter-opt.cpp - run passes on sinter IR ---------------------------===//
//
// mlir-opt for Sinter: parses IR in the sinter, func and arith dialects, runs
// the requested passes (Sinter's and MLIR's canonicalize, cse, ...) or the
// whole pipeline (--sinter-pipeline), and prints the result. The lit tests
// drive it.
//
//===----------------------------------------------------------------------===//
#include "sinter/Dialect/Sinter/SinterDialect.h"
#include "sinter/Passes/PassPipeline.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::registerInlinerPass();
  sinter::registerSinterPasses();
  sinter::passes::registerPipeline();

  mlir::DialectRegistry registry;
  registry.insert<sinter::ir::SinterDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Sinter optimizer driver\n", registry));
}
