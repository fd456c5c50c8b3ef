//===- PassPipeline.cpp - the passes from a lowered step to kernels -------===//
#include "sinter/Passes/PassPipeline.h"

#include "sinter/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace sinter::passes {

void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(
      passes::createSinterFusion({.explain = options.explain}, options.fusion));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterSchedule());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterRematerialize(
      {.budget = options.memoryBudget, .explain = options.explain}, options.memory));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterMaterializeReturnedSlices());
}

namespace {

struct PipelineFlags : mlir::PassPipelineOptions<PipelineFlags> {
  Option<int64_t> budget{*this, "budget",
                         llvm::cl::desc("Bytes the step's own memory should fit in (0: no budget)"),
                         llvm::cl::init(0)};
  Option<bool> explain{*this, "explain",
                       llvm::cl::desc("Report every fusion and recomputation as a remark"),
                       llvm::cl::init(false)};
};

} // namespace

void registerPipeline() {
  mlir::PassPipelineRegistration<PipelineFlags>(
      "sinter-pipeline", "The whole pipeline from a lowered step to fused, planned kernels",
      [](mlir::OpPassManager &pm, const PipelineFlags &flags) {
        buildPipeline(pm, {.explain = flags.explain, .memoryBudget = flags.budget});
      });
}

} // namespace sinter::passes
