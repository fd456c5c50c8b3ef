//===- CpuTarget.cpp - the host CPU as a Target ----------------------------===//
#include "sinter/Codegen/Target.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/Environment.h"

#include "absl/strings/str_cat.h"

#include <map>
#include <memory>
#include <mutex>

namespace sinter::codegen {

namespace {

class CpuTarget final : public Target {
public:
  explicit CpuTarget(std::string cpu) : cpu_(std::move(cpu)) {}
  const TargetDescription &description() const override { return description_; }

  bool isLibraryCall(mlir::Operation *op) const override { return isLibraryKernel(op); }

  std::optional<LibraryStep> libraryStep(mlir::Operation *op) const override {
    return cpuLibraryStep(op);
  }

  KernelPlan planKernel(ir::FusionOp fusion) const override { return planCpuKernel(fusion); }

  int64_t allocationSize(int64_t bytes) const override {
    return runtime::HostAllocator::size_class(bytes);
  }

  passes::KernelMemory kernelMemory(mlir::Operation *op) const override {
    if (auto fusion = mlir::dyn_cast<ir::FusionOp>(op)) {
      KernelPlan plan = planCpuKernel(fusion);
      return {std::move(plan.inPlace), std::move(plan.scratchBytes)};
    }
    if (isLibraryKernel(op) && !cpuLibraryStep(op))
      return {{}, cpuLibraryScratch(op)};
    return {};
  }

  mlir::FailureOr<RenderedKernels> render(mlir::ModuleOp module) const override {
    RenderedKernels kernels;
    kernels.prefix = "sinter_kernel_";
    mlir::FailureOr<std::string> source = renderCpuKernels(
        module.getOperation(), kernels.prefix, kernels.count, &kernels.scratch, &kernels.plans);
    if (mlir::failed(source))
      return mlir::failure();
    kernels.source = std::move(*source);
    kernels.cpu = cpu_;
    return kernels;
  }

  StatusOr<BuiltKernels> build(const RenderedKernels &kernels) const override {
    CompiledLibrary library;
    std::string error;
    if (!compileHostLibrary(kernels.source, library, error, kernels.cpu))
      return absl::FailedPreconditionError(error);
    return BuiltKernels{library.path, library.cacheHit};
  }

private:
  TargetDescription description_{
      .name = "cpu", .device = runtime::DeviceKind::Cpu, .alignment = 64, .sourceSuffix = ".cpp"};
  std::string cpu_;
};

} // namespace

passes::MemoryRules memoryRules(const Target &target) {
  return {
      .kernel = [&target](mlir::Operation *op) { return target.kernelMemory(op); },
      .allocationSize = [&target](int64_t bytes) { return target.allocationSize(bytes); },
      .alignment = target.description().alignment,
      .resultsInArena = target.description().resultsInArena,
  };
}

fusion::FusionRules fusionRules(const Target &target) {
  return {
      .isLibraryCall = [&target](mlir::Operation *op) { return target.isLibraryCall(op); },
      .target = target.description().name,
  };
}

const Target &cpuTarget(const std::string &cpu) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const CpuTarget>> targets;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<const CpuTarget> &target = targets[cpu];
  if (!target)
    target = std::make_unique<const CpuTarget>(cpu);
  return *target;
}

StatusOr<const Target *> targetFor(runtime::DeviceKind device, const std::string &cpu) {
  switch (device) {
  case runtime::DeviceKind::Cpu:
    return &cpuTarget(cpu);
  case runtime::DeviceKind::Cuda:
    break;
  }
  if (runtime::environment().cuda_simulator)
    return &cudaTarget();
  StatusOr<std::vector<cuda::DeviceInfo>> gpus = cuda::listDevices();
  if (!gpus.ok())
    return absl::FailedPreconditionError(
        absl::StrCat("steps on a GPU need one: ", gpus.status().message(),
                     "; SINTER_CUDA_SIMULATOR=1 runs CUDA steps on the CUDA simulator"));
  const cuda::DeviceInfo &first = gpus->front();
  return &cudaTarget(first.computeCapabilityMajor * 10 + first.computeCapabilityMinor);
}

} // namespace sinter::codegen
