//===- CpuTarget.cpp - the host CPU as a Target ----------------------------===//
#include "sinter/Codegen/Target.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Passes/FusionPolicy.h"
#include "sinter/runtime/Allocator.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

namespace sinter::codegen {

namespace {

class CpuTarget final : public Target {
public:
  const TargetDescription &description() const override { return description_; }

  bool isLibraryCall(mlir::Operation *op) const override { return isLibraryKernel(op); }

  std::optional<LibraryStep> libraryStep(mlir::Operation *op) const override {
    return cpuLibraryStep(op);
  }

  /// One loop computes all the fusion's results (they have one size), or it
  /// is a row kernel (rendersRowByRow: a row's reads come before its
  /// writes), and the operand reaches that result and every other only
  /// through ops that keep the index (or reductions, computed before the
  /// writes).
  bool writesInPlace(ir::FusionOp fusion, unsigned operand, unsigned result) const override {
    auto yield = mlir::cast<ir::YieldOp>(fusion.getBody().front().getTerminator());
    auto elements = [](mlir::Value v) {
      return mlir::cast<mlir::ShapedType>(v.getType()).getNumElements();
    };
    bool oneSize = llvm::all_of(yield.getValues(), [&](mlir::Value v) {
      return elements(v) == elements(yield.getOperand(0));
    });
    if (!oneSize && !rendersRowByRow(fusion))
      return false; // results of several sizes, and not a row kernel: a loop per result
    llvm::SmallVector<mlir::Value> work = {fusion.getBody().front().getArgument(operand)};
    llvm::DenseSet<mlir::Operation *> seen;
    bool reachesResult = false;
    while (!work.empty()) {
      mlir::Value value = work.pop_back_val();
      for (mlir::OpOperand &use : value.getUses()) {
        mlir::Operation *user = use.getOwner();
        if (mlir::isa<ir::YieldOp>(user)) {
          reachesResult = reachesResult || use.getOperandNumber() == result;
          continue;
        }
        if (!seen.insert(user).second || mlir::isa<ir::ReduceSumOp, ir::ReduceMaxOp>(user))
          continue;
        bool keepsIndex = mlir::isa<ir::ReshapeOp>(user) ||
                          sinter::fusion::roleOf(user) == sinter::fusion::Role::Elementwise;
        if (!keepsIndex)
          return false;
        for (mlir::Value next : user->getResults())
          work.push_back(next);
      }
    }
    return reachesResult;
  }

  int64_t allocationSize(int64_t bytes) const override {
    return runtime::HostAllocator::size_class(bytes);
  }

  mlir::FailureOr<RenderedKernels> render(mlir::ModuleOp module) const override {
    RenderedKernels kernels;
    kernels.prefix = "sinter_kernel_";
    mlir::FailureOr<std::string> source =
        renderCpuKernels(module.getOperation(), kernels.prefix, kernels.count, &kernels.scratch);
    if (mlir::failed(source))
      return mlir::failure();
    kernels.source = std::move(*source);
    return kernels;
  }

  StatusOr<BuiltKernels> build(const RenderedKernels &kernels) const override {
    CompiledLibrary library;
    std::string error;
    if (!compileHostLibrary(kernels.source, library, error))
      return absl::FailedPreconditionError(error);
    return BuiltKernels{library.path, library.cacheHit};
  }

private:
  TargetDescription description_{.name = "cpu", .alignment = 64};
};

} // namespace

const Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace sinter::codegen
