//===- Pipeline.cpp - the compiler's pass pipeline, as one chain -----------===//
#include "sinter/Compiler/Pipeline.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Compiler/LowerLazyGraph.h"
#include "sinter/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace sinter::compiler {

void buildPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterFusion());
  pm.addPass(mlir::createCanonicalizerPass());
}

bool compileStepForCpu(const std::vector<lazy::NodePtr> &outputs, CpuStep &step,
                       std::string &error) {
  mlir::MLIRContext context;
  context.loadDialect<ir::SinterDialect, mlir::func::FuncDialect>();
  llvm::raw_string_ostream diagnostics(error);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    diagnostics << diagnostic.getLocation() << ": " << diagnostic << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = lowerLazyGraph(context, outputs);
  if (!module)
    return false;
  mlir::PassManager pm(&context);
  buildPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return false;
  llvm::raw_string_ostream ir(step.ir);
  module->print(ir);
  mlir::FailureOr<std::string> source =
      codegen::renderCpuKernels(module->getOperation(), "sinter_kernel_", step.kernels);
  if (mlir::failed(source))
    return false;
  codegen::CompiledLibrary library;
  std::string compileError;
  if (!codegen::compileHostLibrary(*source, library, compileError)) {
    diagnostics << compileError;
    return false;
  }
  step.library = library.path;
  step.cacheHit = library.cacheHit;
  return true;
}

} // namespace sinter::compiler
