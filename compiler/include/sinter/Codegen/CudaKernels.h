//===- CudaKernels.h - every kernel of a module as CUDA C++ ------*- C++ -*-===//
//
// The walk over a planned module that the CUDA target will render with
// (Note [The CUDA renderer] in sinter/Codegen/CudaRenderer.h): each fusion
// planned (planCudaKernel) and written by the CUDA renderer, each
// library op but the matrix products (library calls of the Program) as a
// call of kernels/cuda/library.h (Note [Library ops on the GPU]); a kernel
// it cannot write is said by a comment in its place, with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_CUDAKERNELS_H
#define SINTER_CODEGEN_CUDAKERNELS_H

#include "sinter/Codegen/KernelPlan.h"
#include "sinter/Dialect/Sinter/SinterOps.h"
#include "sinter/runtime/LaunchShape.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sinter::codegen {

struct CudaKernels {
  /// The prologue and every kernel written, kernel k named `<prefix><k>`.
  std::string source;
  /// Kernels (fusions and library ops) in program order.
  int64_t count = 0;
  /// Per kernel: whether it was written, whether it is a library op (a
  /// fusion otherwise), its launch shape, and why it was not written.
  std::vector<bool> written;
  std::vector<bool> library;
  std::vector<runtime::LaunchShape> shapes;
  std::vector<std::string> why;
  /// Per kernel, a fusion's plan (what it was written from).
  std::vector<std::optional<KernelPlan>> plans;
  /// Per kernel, its op (the sinter.fusion, or the library op).
  std::vector<mlir::Operation *> ops;
};

/// What CUDA kernels are planned with (Note [Plan choices] in
/// sinter/Codegen/KernelPlan.h): no lanes, rows, column blocks or rows on a
/// stack, values recomputed where read.
KernelPlan::Choices cudaPlanChoices();

/// The plan of `fusion`'s CUDA kernel: the analysis with the CUDA target's
/// choices (cudaPlanChoices), the in-place pairs it keeps
/// (keepCudaInPlacePairs) and its scratch buffers (cudaScratchBytes).
KernelPlan planCudaKernel(ir::FusionOp fusion);

CudaKernels renderCudaKernels(mlir::Operation *root, llvm::StringRef prefix);

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_CUDAKERNELS_H
