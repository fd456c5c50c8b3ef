//===- LibraryOps.h - the library ops' operands, as their kernels see them -===//
//
// What the CPU's library kernels (CpuLibrary.cpp, kernels/cpu/) and the
// CUDA ones (CudaKernels.cpp, kernels/cuda/library.h) both read of a
// library op: a tensor around an axis, a convolution's operands and
// attributes whichever of its three ops it is, a pooling's attributes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_LIBRARYOPS_H
#define SINTER_CODEGEN_LIBRARYOPS_H

#include "sinter/Dialect/Sinter/SinterOps.h"

#include <array>

namespace sinter::codegen {

/// `outer`, `extent`, `inner` of `shape` viewed as [outer, extent, inner]
/// around `axis`.
std::array<int64_t, 3> aroundAxis(llvm::ArrayRef<int64_t> shape, int64_t axis);

/// A convolution or one of its gradients, as the convolution it is of:
/// `input` [N, C, H, W], `filter` [F, C / groups, KH, KW] and `output`
/// [N, F, OH, OW] are the op's operands or result (the forward op's
/// result is the output, the input gradient's the input, the filter
/// gradient's the filter).
struct ConvolutionOperands {
  mlir::Value input, filter, output;
  llvm::ArrayRef<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};
ConvolutionOperands convolutionOperands(mlir::Operation *op);

/// A pooling or its gradient: its kind and window; `input` [N, C, H, W]
/// and `output` [N, C, OH, OW] as the forward op sees them.
struct PoolOperands {
  ir::PoolKind kind;
  llvm::ArrayRef<int64_t> kernel, stride, padding;
  mlir::Value input, output;
  bool backward = false;
};
PoolOperands poolOperands(mlir::Operation *op);

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_LIBRARYOPS_H
