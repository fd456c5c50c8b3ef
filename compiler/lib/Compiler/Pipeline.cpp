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
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace sinter::compiler {

void buildPipeline(mlir::OpPassManager &pm, bool explainFusion) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterFusion({.explain = explainFusion}));
  pm.addPass(mlir::createCanonicalizerPass());
}

namespace {

int64_t elementBytes(mlir::Type type) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(type).getElementType();
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

/// The function as launches over buffers, in the kernels' order (the order
/// codegen::renderCpuKernels numbers them).
/// Kernels are numbered across the module; `kernel` is the number of the
/// function's first kernel and is advanced past its last.
bool translate(mlir::func::FuncOp function, runtime::Program &program, int &kernel,
               std::string &error) {
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

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Writes `text` to `<dumpDir>/<tag><suffix>`, or to stderr without a folder.
void dump(const DebugOptions &debug, const std::string &suffix, const std::string &text) {
  if (debug.dumpDir.empty()) {
    llvm::errs() << "// ----- sinter: " << debug.tag << suffix << " -----\n" << text << "\n";
    return;
  }
  std::error_code ec = llvm::sys::fs::create_directories(debug.dumpDir);
  std::string path = debug.dumpDir + "/" + debug.tag + suffix;
  llvm::raw_fd_ostream file(path, ec);
  if (ec) {
    llvm::errs() << "sinter: cannot write " << path << ": " << ec.message() << "\n";
    return;
  }
  file << text;
}

} // namespace

bool compileGraphsForCpu(const std::vector<std::vector<lazy::NodePtr>> &graphs,
                         std::vector<runtime::Program> &programs, CpuStep &step, std::string &error,
                         const DebugOptions &debug) {
  mlir::MLIRContext context;
  context.loadDialect<ir::SinterDialect, mlir::func::FuncDialect>();
  llvm::raw_string_ostream diagnostics(error);
  std::string fusionReport;
  llvm::raw_string_ostream fusion(fusionReport);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    llvm::raw_string_ostream &os =
        diagnostic.getSeverity() == mlir::DiagnosticSeverity::Remark ? fusion : diagnostics;
    os << diagnostic.getLocation() << ": " << diagnostic << "\n";
    return mlir::success();
  });

  Clock::time_point start = Clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::string name = graphs.size() == 1 ? "step" : "op" + std::to_string(i);
    mlir::OwningOpRef<mlir::ModuleOp> one = lowerLazyGraph(context, graphs[i], name);
    if (!one)
      return false;
    for (mlir::func::FuncOp function :
         llvm::make_early_inc_range(one->getOps<mlir::func::FuncOp>())) {
      function->remove();
      module->getBody()->push_back(function);
    }
  }
  step.times.lower = secondsSince(start);

  start = Clock::now();
  std::string passLog;
  llvm::raw_string_ostream passes(passLog);
  mlir::PassManager pm(&context);
  if (debug.level >= 4) {
    context.disableMultithreading();
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, passes);
  }
  buildPipeline(pm, /*explain=*/debug.level >= 2);
  bool passed = mlir::succeeded(pm.run(*module));
  step.times.passes = secondsSince(start);
  if (debug.level >= 4)
    dump(debug, ".passes.mlir", passLog);
  if (debug.level >= 2)
    dump(debug, ".fusion.txt", fusionReport);
  if (!passed)
    return false;
  llvm::raw_string_ostream ir(step.ir);
  module->print(ir);
  if (debug.level >= 2)
    dump(debug, ".mlir", step.ir);

  start = Clock::now();
  mlir::FailureOr<std::string> source =
      codegen::renderCpuKernels(module->getOperation(), "sinter_kernel_", step.kernels);
  step.times.codegen = secondsSince(start);
  if (mlir::failed(source))
    return false;
  if (debug.level >= 3)
    dump(debug, ".kernels.cpp", *source);

  start = Clock::now();
  codegen::CompiledLibrary library;
  std::string compileError;
  if (!codegen::compileHostLibrary(*source, library, compileError)) {
    diagnostics << compileError;
    return false;
  }
  step.library = library.path;
  step.cacheHit = library.cacheHit;
  programs.clear();
  int kernel = 0;
  for (mlir::func::FuncOp function : module->getOps<mlir::func::FuncOp>()) {
    runtime::Program &program = programs.emplace_back();
    program.library = library.path;
    program.kernelPrefix = "sinter_kernel_";
    std::string translateError;
    if (!translate(function, program, kernel, translateError)) {
      diagnostics << translateError << "\n";
      return false;
    }
  }
  step.times.build = secondsSince(start);
  return true;
}

bool compileStepForCpu(const std::vector<lazy::NodePtr> &outputs, CpuStep &step, std::string &error,
                       const DebugOptions &debug) {
  std::vector<runtime::Program> programs;
  if (!compileGraphsForCpu({outputs}, programs, step, error, debug))
    return false;
  step.program = std::move(programs.front());
  return true;
}

} // namespace sinter::compiler
