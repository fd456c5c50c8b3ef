//===- CudaRenderer.h - a kernel plan as a CUDA C++ kernel -------*- C++ -*-===//
//
// Note [The CUDA renderer]
// The CUDA renderer writes a fusion's kernel from the same plan as the CPU
// renderer (Note [Kernel plans] in sinter/Codegen/KernelPlan.h), in CUDA C++
// that NVRTC compiles for the GPU and the host compiler compiles for the
// CUDA simulator (Note [The CUDA simulator] in sinter/runtime/Simt.h): the
// same text. Pointwise ops come from the one table both renderers draw
// from (Note [One table of pointwise ops]), the scalar helpers from
// kernels/common/.
//
// It writes every fusion plan: each kernel is one or more grid-stride loops
// (Note [Loops of a CUDA kernel] in CudaRenderer.cpp), a thread per element
// for pointwise work and for short reductions that keep the innermost dim,
// tall column sums (bias gradients) split across blocks and combined by
// the last block of each tile of outputs (Note [Split column reductions]),
// a warp per element for reductions over the innermost dim (batch-norm
// statistics), and a warp per row for row plans (softmax, layer norm), a
// block per row for rows of 2048 columns or more (a loss over a
// vocabulary: Note [Row kernels on the GPU]); 256 threads a block (eight
// warps: enough to hide a load's latency on sm_80/sm_90 at any occupancy)
// and up to 65535 blocks (each thread then takes several elements). A value
// read at another index (a broadcast, a transpose, a slice, a reshape) is a
// device lambda of the index, through the plan's index map; a stored value
// is recomputed where read, a row value kept in a register; every
// reduction runs in a fixed order. A plan that would repeat a reduction for
// many elements (read through a broadcast: split reductions, next) is
// refused with a RenderProblem that says why; fusion makes none today. A
// CUDA kernel's only scratch buffers are its split reductions' partials
// (cudaScratchBytes), which its plan records.
//
// Each kernel is
//   extern "C" __global__ void <name>(const T0 *in0, ..., R0 *out0, ...)
// with its launch shape beside it; for the simulator (SINTER_SIMULATED
// defined), also
//   extern "C" void <name>_simulate(const void *shape, const void *options,
//                                   void *const *buffers, void *status)
// which runs it through sinter::simt::launch with the buffers in the
// kernel's parameter order and writes the Status.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_CUDARENDERER_H
#define SINTER_CODEGEN_CUDARENDERER_H

#include "sinter/Codegen/CpuRenderer.h"
#include "sinter/Codegen/KernelPlan.h"
#include "sinter/runtime/LaunchShape.h"

#include <optional>
#include <string>
#include <vector>

namespace sinter::codegen {

/// What every translation unit of CUDA kernels starts with
/// (kernels/cuda/prologue.h: the fixed-width types NVRTC lacks, the SIMT
/// prelude for the simulator, the scalar helpers and Philox).
std::string cudaKernelPrologue();

/// Drops the in-place pairs (Note [In-place kernels]) a CUDA kernel cannot
/// keep: an input that a reduction outside a row reads, which other
/// threads still read while one writes over it (Note [Loops of a CUDA
/// kernel] in CudaRenderer.cpp). The CUDA target's plans are the CPU's
/// with this choice recorded.
void keepCudaInPlacePairs(KernelPlan &plan);

/// The bytes of each scratch buffer `plan`'s CUDA kernel takes after its
/// results: the partials of its split reductions (Note [Split column
/// reductions] in CudaRenderer.cpp); none for a plan it cannot write.
std::vector<int64_t> cudaScratchBytes(const KernelPlan &plan);

/// Threads a block of every generated CUDA kernel (eight warps).
inline constexpr int64_t kCudaThreads = 256;
/// Blocks that fill a GPU, what kernels split work to reach: eight blocks
/// on each of an H100's 132 SMs, rounded.
inline constexpr int64_t kCudaFillBlocks = 1024;

/// The launch shape of a kernel of grid-stride loops that would use
/// `blocks` blocks of kCudaThreads threads: at least one, at most 65535
/// (each thread then takes several elements).
runtime::LaunchShape cudaLaunchShape(int64_t blocks);

/// A kernel's text: `extern "C" __global__ void <name>(<parameters>)` with
/// `body`, and its simulator entry `<name>_simulate`, which hands the
/// buffers to it as `casts` (one per parameter, of `buffers[i]`); `fibers`
/// where the kernel has barriers or warp operations.
std::string cudaKernelText(const std::string &name, const std::vector<std::string> &parameters,
                           const std::vector<std::string> &casts, const std::string &body,
                           bool fibers);

/// Appends `plan`'s kernel `name` to `source` and sets its launch shape, or
/// returns the first value it cannot write (or, as value -1, a plan kind
/// it does not write yet: RenderProblem::Kind::UnsupportedOp).
std::optional<RenderProblem> renderCudaKernel(const KernelPlan &plan, const std::string &name,
                                              std::string &source, runtime::LaunchShape &shape);

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_CUDARENDERER_H
