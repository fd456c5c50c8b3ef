//===- sinter-translate.cpp - sinter IR out of MLIR: kernels, Programs ----===//
//
// mlir-translate for Sinter: reads a module that has been through the
// pipeline (sinter-opt --sinter-pipeline) and writes what the backend makes
// of it, so that codegen and translation get FileCheck tests as the passes
// do:
//   --sinter-to-kernel-plans the plan of every fusion's kernel (the CPU target)
//   --sinter-to-cuda-kernel-plans  the same for the CUDA target
//   --sinter-to-cpu-kernels  the C++ source of every kernel (the CPU target)
//   --sinter-to-program      each function as a runtime Program, its memory
//                            planned by the CPU target's rules
//   --sinter-to-program-json the same Programs as files would hold them
//                            (sinter/runtime/ProgramFile.h), one JSON
//                            document per function after a `// program @f`
//                            line
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CudaKernels.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Compiler/ProgramTranslation.h"
#include "sinter/Dialect/Sinter/SinterDialect.h"
#include "sinter/runtime/ProgramFile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include <functional>

namespace {

void registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<sinter::ir::SinterDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
}

/// Every fusion's plan on `target`, numbered as its kernels.
mlir::LogicalResult kernelPlans(const sinter::codegen::Target &target, mlir::Operation *op,
                                llvm::raw_ostream &os) {
  int kernel = 0;
  op->walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *inner) {
    if (auto fusion = mlir::dyn_cast<sinter::ir::FusionOp>(inner)) {
      os << "// kernel " << kernel++ << " at " << fusion.getLoc() << ": "
         << sinter::codegen::formatKernelPlan(target.planKernel(fusion));
      return mlir::WalkResult::skip();
    }
    if (target.isLibraryCall(inner))
      ++kernel;
    return mlir::WalkResult::advance();
  });
  return mlir::success();
}

mlir::LogicalResult toCpuKernels(mlir::Operation *op, llvm::raw_ostream &os) {
  auto module = mlir::dyn_cast<mlir::ModuleOp>(op);
  if (!module)
    return op->emitError("expected a module");
  mlir::FailureOr<sinter::codegen::RenderedKernels> kernels =
      sinter::codegen::cpuTarget().render(module);
  if (mlir::failed(kernels))
    return mlir::failure();
  os << kernels->source;
  return mlir::success();
}

mlir::LogicalResult toCudaKernels(mlir::Operation *op, llvm::raw_ostream &os) {
  sinter::codegen::CudaKernels kernels = sinter::codegen::renderCudaKernels(op, "sinter_kernel_");
  os << kernels.source;
  return mlir::success();
}

/// Each function's planned Program, given to `emit` with its name and plan.
mlir::LogicalResult
eachProgram(mlir::Operation *op,
            const std::function<void(llvm::StringRef, const sinter::runtime::Program &,
                                     const std::string &)> &emit) {
  auto module = mlir::dyn_cast<mlir::ModuleOp>(op);
  if (!module)
    return op->emitError("expected a module");
  const sinter::codegen::Target &target = sinter::codegen::cpuTarget();
  mlir::FailureOr<sinter::codegen::RenderedKernels> kernels = target.render(module);
  if (mlir::failed(kernels))
    return mlir::failure();
  int kernel = 0;
  for (mlir::func::FuncOp function : module.getOps<mlir::func::FuncOp>()) {
    sinter::runtime::Program program;
    program.kernelPrefix = kernels->prefix;
    std::string plan;
    if (mlir::failed(sinter::compiler::planFunction(function, target, *kernels, kernel,
                                                    /*donatable=*/nullptr, program, plan)))
      return mlir::failure();
    emit(function.getSymName(), program, plan);
  }
  return mlir::success();
}

mlir::LogicalResult toProgram(mlir::Operation *op, llvm::raw_ostream &os) {
  return eachProgram(op, [&](llvm::StringRef name, const sinter::runtime::Program &program,
                             const std::string &plan) {
    os << "// program @" << name << "\n" << sinter::compiler::formatProgram(program) << plan;
  });
}

mlir::LogicalResult toProgramJson(mlir::Operation *op, llvm::raw_ostream &os) {
  return eachProgram(
      op, [&](llvm::StringRef name, const sinter::runtime::Program &program, const std::string &) {
        os << "// program @" << name << "\n" << sinter::runtime::writeProgram(program);
      });
}

} // namespace

int main(int argc, char **argv) {
  mlir::TranslateFromMLIRRegistration cpuPlans(
      "sinter-to-kernel-plans", "the plan of every fusion's kernel, for the CPU target",
      [](mlir::Operation *op, llvm::raw_ostream &os) {
        return kernelPlans(sinter::codegen::cpuTarget(), op, os);
      },
      registerDialects);
  mlir::TranslateFromMLIRRegistration cudaPlans(
      "sinter-to-cuda-kernel-plans", "the plan of every fusion's kernel, for the CUDA target",
      [](mlir::Operation *op, llvm::raw_ostream &os) {
        return kernelPlans(sinter::codegen::cudaTarget(), op, os);
      },
      registerDialects);
  mlir::TranslateFromMLIRRegistration cudaKernels(
      "sinter-to-cuda-kernels",
      "the CUDA C++ of every kernel the CUDA renderer writes yet (a comment for the others)",
      toCudaKernels, registerDialects);
  mlir::TranslateFromMLIRRegistration cpuKernels(
      "sinter-to-cpu-kernels", "the C++ source of every kernel, for the CPU target", toCpuKernels,
      registerDialects);
  mlir::TranslateFromMLIRRegistration program(
      "sinter-to-program", "each function as a runtime Program with its memory plan", toProgram,
      registerDialects);
  mlir::TranslateFromMLIRRegistration programJson(
      "sinter-to-program-json", "each function's Program as a file holds it (JSON)", toProgramJson,
      registerDialects);
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "Sinter translation driver\n")) ? 1 : 0;
}
