//===- CpuKernel.h - a sinter.fusion as a C++ kernel ------------*- C++ -*-===//
//
// Note [Kernels as functions of an index]
// Inside a fusion every value is a pure function of its own row-major linear
// index (passed with its column, Note [The column beside the index] in
// compiler/lib/Renderers/CpuRenderer.cpp), given the kernel's inputs: an
// elementwise op applies its math to its operands at the same index; a layout
// op (broadcast, reshape, transpose, slice) evaluates its operand at a remapped
// index; a row reduction is the one value that is computed ahead, into a
// per-row array, in its own loop over the row. The renderer emits each value as
// an inlinable lambda of its index, the reductions as loops in program order,
// and a loop per result that stores it. Layout ops thus cost index arithmetic,
// never a copy, and a value used at several indices is recomputed rather than
// stored.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_CPUKERNEL_H
#define SINTER_CODEGEN_CPUKERNEL_H

#include "sinter/Codegen/KernelPlan.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Dialect/Sinter/SinterOps.h"

#include <optional>

#include <string>

namespace sinter::codegen {

/// The C++ element type the library kernels take for a tensor type
/// ("float", "int32_t", "int64_t", "bool"), or "": f16 and bf16 among them,
/// which lowering converts to f32 around every library op (Note [Half
/// precision in f32]); fusions' values use cppElementTypeOf
/// (sinter/Codegen/CpuRenderer.h), which has the half storage types.
std::string cppElementType(mlir::Type tensorType);

/// Whether a cap on oneDNN's ISA (the value of ONEDNN_MAX_CPU_ISA or
/// DNNL_MAX_CPU_ISA) leaves it its AVX-512 kernels: false for SSE41, AVX,
/// AVX2, AVX2_VNNI and the Xeon Phi levels, true for the rest (the
/// AVX-512 and AMX levels, ALL, and values oneDNN ignores).
bool oneDnnCapKeepsAvx512(llvm::StringRef cap);

/// Whether oneDNN runs its AVX-512 kernels on this machine (the host CPU's
/// features, capped by ONEDNN_MAX_CPU_ISA or DNNL_MAX_CPU_ISA as oneDNN caps them): it then
/// multiplies every matrix product; otherwise OpenBLAS takes the large ones with a transposed left
/// matrix (Note [Which library multiplies] in CpuLibrary.cpp).
bool oneDnnRunsAvx512();

/// Whether `op` is run by a library kernel (matmul, convolutions, pooling,
/// gather, scatter_add, concat, argmax) rather than by a fusion.
bool isLibraryKernel(mlir::Operation *op);

/// A matrix product outside a fusion as a step of the Program (Note [Matrix
/// products as data] in sinter/runtime/Gemm.h): its descriptor and the
/// host's library and threads (Notes [Which library multiplies] and [Small
/// products on one thread] in CpuLibrary.cpp); nullopt for other ops.
std::optional<LibraryStep> cpuLibraryStep(mlir::Operation *op);

/// The scratch bytes a library kernel takes after its results (a
/// convolution's column matrix), what renderCpuLibraryKernel gives it;
/// asked by memory planning without writing the kernel.
std::vector<int64_t> cpuLibraryScratch(mlir::Operation *op);

/// The kernel of a library op, with the same calling convention as a
/// fusion's (appended to `os`, without the prologue); the scratch bytes it
/// takes after its results go to `scratch`.
mlir::LogicalResult renderCpuLibraryKernel(mlir::Operation *op, llvm::StringRef name,
                                           llvm::raw_ostream &os,
                                           std::vector<int64_t> *scratch = nullptr);

/// The plan of `fusion`'s CPU kernel (Note [Kernel plans] in
/// sinter/Codegen/KernelPlan.h): planFusion with the CPU's choices
/// (cpuPlanChoices in sinter/Codegen/CpuRenderer.h); what the renderer
/// writes, and what planning asks (in-place pairs, scratch bytes).
KernelPlan planCpuKernel(ir::FusionOp fusion);

/// Every kernel under `root` (each sinter.fusion and each library op), as one
/// translation unit (one library per program): kernel k, in program order,
/// is named `<prefix><k>` (a matrix product takes a number but is a library
/// call, cpuLibraryStep, with no function) and is called as
///   extern "C" void <prefix><k>(const void *const *inputs, void *const *outputs)
/// with dense row-major buffers: the op's operands, then its results followed
/// by the scratch buffers the kernel needs (sizes in bytes in `(*scratch)[k]`;
/// their contents need not survive a call). `count` is set to the number of
/// kernels, and `(*plans)[k]` to a fusion's plan (none for a library op).
/// Fails, with a diagnostic at the op, on what the CPU renderer does not
/// support yet (f16 and bf16 values).
mlir::FailureOr<std::string>
renderCpuKernels(mlir::Operation *root, llvm::StringRef prefix, int64_t &count,
                 std::vector<std::vector<int64_t>> *scratch = nullptr,
                 std::vector<std::optional<KernelPlan>> *plans = nullptr);

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_CPUKERNEL_H
