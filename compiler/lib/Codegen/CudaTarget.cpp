//===- CudaTarget.cpp - NVIDIA GPUs as a Target ----------------------------===//
//
// Note [The CUDA target]
// Kernels are the CUDA renderer's (Note [The CUDA renderer]: every fusion,
// every library op but matrix products, which are library calls: cuBLAS on
// a GPU, the host's GEMM on the simulator); plans are the CPU analysis with
// the CUDA kernel's in-place choices (planCudaKernel), and take no scratch
// (a row's values live in registers); buffers are aligned to 256 bytes and
// allocated in multiples of 256 (the device's granularity). A build is for
// the CUDA simulator (Note [The CUDA simulator]): the same CUDA C++ built by
// the host compiler with SINTER_SIMULATED, after the CPU's kernel header
// (which brings the host's sinter_gemm_v1 for the matrix products), into a
// shared library cached like the CPU's. Building for a GPU (NVRTC to a cubin
// for the device's architecture, with PTX) comes with the driver's device.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/Target.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/CudaKernels.h"
#include "sinter/Codegen/HostCompiler.h"

#include "llvm/ADT/Twine.h"

namespace sinter::codegen {

namespace {

class CudaTarget final : public Target {
public:
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
    if (auto fusion = mlir::dyn_cast<ir::FusionOp>(op))
      return {planCudaKernel(fusion).inPlace, {}};
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
    kernels.plans = std::move(cuda.plans);
    kernels.shapes = std::move(cuda.shapes);
    return kernels;
  }

  StatusOr<BuiltKernels> build(const RenderedKernels &kernels) const override {
    CompiledLibrary library;
    std::string error;
    if (!compileHostLibrary("#include \"cpu/kernel.h\"\n" + kernels.source, library, error,
                            HostBuild{.cpu = "native", .simulatedCuda = true}))
      return absl::FailedPreconditionError(error);
    return BuiltKernels{library.path, library.cacheHit};
  }

private:
  static constexpr int64_t kGranularity = 256;
  TargetDescription description_{.name = "cuda",
                                 .device = runtime::DeviceKind::Cuda,
                                 .alignment = kGranularity,
                                 .sourceSuffix = ".cu"};
};

} // namespace

const Target &cudaTarget() {
  static const CudaTarget target;
  return target;
}

} // namespace sinter::codegen
