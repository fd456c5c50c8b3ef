//===- CudaTarget.cpp - NVIDIA GPUs as a Target ----------------------------===//
//
// Note [The CUDA target]
// Kernels are the CUDA renderer's (Note [The CUDA renderer]: every fusion,
// every library op but matrix products, which are library calls: cuBLAS on
// a GPU, the host's GEMM on the simulator); plans are the analysis every
// target runs, with the CUDA target's choices (planCudaKernel, Note [Plan
// choices]: a row's values live in registers, every value is recomputed
// where read, and the only scratch is split reductions' partials, Note
// [Split column reductions]) and the in-place pairs a CUDA kernel keeps; buffers are aligned to 256 bytes and
// allocated in multiples of 256 (the device's granularity). One target per
// build: for the CUDA simulator (cudaTarget(), Note [The CUDA simulator]),
// the CUDA C++ built by the host compiler with SINTER_SIMULATED, after the
// CPU's kernel header (which brings the host's sinter_gemm_v1 for the
// matrix products), into a shared library cached like the CPU's; for a GPU
// (cudaTarget(arch)), the same CUDA C++ compiled by NVRTC into a cubin for
// that architecture (compileCudaModule), cached beside the host's
// libraries, which the driver's device loads (Note [The driver's device] in
// runtime/lib/DriverDevice.cpp). Plans and kernels are the same for both,
// so what the simulator runs is what the GPU runs.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/Target.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/CudaKernels.h"
#include "sinter/Codegen/HostCompiler.h"

#include "llvm/ADT/Twine.h"

#include <map>
#include <memory>
#include <mutex>

namespace sinter::codegen {

namespace {

class CudaTarget final : public Target {
public:
  /// `arch` 0: the simulator; else the compute capability (90: sm_90).
  explicit CudaTarget(int arch) : arch_(arch) {}

  const TargetDescription &description() const override { return description_; }

  bool isLibraryCall(mlir::Operation *op) const override { return isLibraryKernel(op); }

  std::optional<LibraryStep> libraryStep(mlir::Operation *op) const override {
    // The descriptor the CPU's analysis makes (Note [Matrix products as
    // data]), without the host's choice of library and threads.
    std::optional<LibraryStep> step = cpuLibraryStep(op);
    if (step)
      step->host = {};
    return step;
  }

  KernelPlan planKernel(ir::FusionOp fusion) const override { return planCudaKernel(fusion); }

  int64_t allocationSize(int64_t bytes) const override {
    return bytes <= 0 ? 0 : (bytes + kGranularity - 1) / kGranularity * kGranularity;
  }

  passes::KernelMemory kernelMemory(mlir::Operation *op) const override {
    if (auto fusion = mlir::dyn_cast<ir::FusionOp>(op)) {
      KernelPlan plan = planCudaKernel(fusion);
      return {std::move(plan.inPlace), std::move(plan.scratchBytes)};
    }
    return {};
  }

  mlir::FailureOr<RenderedKernels> render(mlir::ModuleOp module) const override {
    RenderedKernels kernels;
    kernels.prefix = "sinter_kernel_";
    CudaKernels cuda = renderCudaKernels(module.getOperation(), kernels.prefix);
    // Each kernel not written is a failure, but a matrix product (a
    // library call of the Program).
    bool failed = false;
    for (int64_t k = 0; k < cuda.count; ++k)
      if (!cuda.written[k] && !mlir::isa<ir::MatmulOp>(cuda.ops[k])) {
        cuda.ops[k]->emitError() << "the CUDA target cannot write this op's kernel: "
                                 << cuda.why[k];
        failed = true;
      }
    if (failed)
      return mlir::failure();
    kernels.source = std::move(cuda.source);
    kernels.count = cuda.count;
    kernels.scratch.assign(static_cast<size_t>(cuda.count), {});
    for (int64_t k = 0; k < cuda.count; ++k)
      if (cuda.plans[k])
        kernels.scratch[k] = cuda.plans[k]->scratchBytes;
    kernels.plans = std::move(cuda.plans);
    kernels.shapes = std::move(cuda.shapes);
    return kernels;
  }

  StatusOr<BuiltKernels> build(const RenderedKernels &kernels) const override {
    CompiledLibrary library;
    std::string error;
    bool built = arch_ == 0
                     ? compileHostLibrary("#include \"cpu/kernel.h\"\n" + kernels.source, library,
                                          error, HostBuild{.cpu = "native", .simulatedCuda = true})
                     : compileCudaModule(kernels.source, arch_, library, error);
    if (!built)
      return absl::FailedPreconditionError(error);
    return BuiltKernels{library.path, library.cacheHit};
  }

private:
  static constexpr int64_t kGranularity = 256;
  int arch_;
  TargetDescription description_{.name = "cuda",
                                 .device = runtime::DeviceKind::Cuda,
                                 .alignment = kGranularity,
                                 .sourceSuffix = ".cu",
                                 .resultsInArena = false};
};

} // namespace

const Target &cudaTarget(int arch) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<const CudaTarget>> targets;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<const CudaTarget> &target = targets[arch];
  if (!target)
    target = std::make_unique<const CudaTarget>(arch);
  return *target;
}

} // namespace sinter::codegen
