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

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

namespace sinter::compiler {

void buildPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterFusion());
  pm.addPass(mlir::createCanonicalizerPass());
}

namespace {

int64_t elementBytes(mlir::Type type) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(type).getElementType();
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

/// The function as launches over buffers, in the kernels' order (the order
/// codegen::renderCpuKernels numbers them).
bool translate(mlir::func::FuncOp function, runtime::Program &program, std::string &error) {
  llvm::DenseMap<mlir::Value, int> buffers;
  auto bufferOf = [&](mlir::Value value) {
    auto [it, inserted] = buffers.try_emplace(value, static_cast<int>(program.buffers.size()));
    if (inserted) {
      auto type = mlir::cast<mlir::ShapedType>(value.getType());
      program.buffers.push_back({type.getNumElements() * elementBytes(type)});
    }
    return it->second;
  };
  for (mlir::BlockArgument arg : function.getArguments())
    program.arguments.push_back(bufferOf(arg));
  int kernel = 0;
  for (mlir::Operation &op : function.getBody().front()) {
    if (auto constant = mlir::dyn_cast<ir::ConstantOp>(op)) {
      auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat()) {
        error = "only splat constants can be compiled yet";
        return false;
      }
      runtime::Program::Fill fill;
      fill.buffer = bufferOf(constant.getResult());
      llvm::ArrayRef<char> raw = dense.getRawData();
      int64_t bytes = elementBytes(dense.getType());
      fill.element.assign(raw.begin(), raw.begin() + std::min<int64_t>(bytes, raw.size()));
      if (dense.getElementType().isInteger(1)) // i1 splats are stored as bits
        fill.element = {static_cast<uint8_t>(dense.getSplatValue<bool>() ? 1 : 0)};
      program.fills.push_back(std::move(fill));
      continue;
    }
    if (mlir::isa<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : op.getOperands())
        program.results.push_back(bufferOf(v));
      continue;
    }
    if (!mlir::isa<ir::FusionOp>(op) && !codegen::isLibraryKernel(&op)) {
      error = "no kernel runs '" + op.getName().getStringRef().str() + "'";
      return false;
    }
    runtime::Program::Launch launch;
    launch.kernel = kernel++;
    for (mlir::Value v : op.getOperands())
      launch.inputs.push_back(bufferOf(v));
    for (mlir::Value v : op.getResults())
      launch.outputs.push_back(bufferOf(v));
    program.launches.push_back(std::move(launch));
  }
  return true;
}

} // namespace

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
  step.program.library = library.path;
  step.program.kernelPrefix = "sinter_kernel_";
  auto function = *module->getOps<mlir::func::FuncOp>().begin();
  std::string translateError;
  if (!translate(function, step.program, translateError)) {
    diagnostics << translateError << "\n";
    return false;
  }
  return true;
}

} // namespace sinter::compiler
