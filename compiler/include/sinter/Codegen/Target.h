//===- Target.h - what the pipeline asks of a backend ------------*- C++ -*-===//
//
// Note [Targets]
// Below fusion, everything that depends on the machine the step runs on goes
// through one interface: which ops are library calls, how a module's kernels
// are planned (KernelPlan.h) and written (C++ for the host compiler; CUDA
// C++ for NVRTC next) and built, which are library calls, and how the device
// allocates (granularity, alignment). The pipeline (Pipeline.cpp), the
// translation into a Program (ProgramTranslation.h) and buffer assignment
// (sinter/Passes/BufferAssignment.h) are given a Target and call nothing
// CPU-specific themselves; a backend is this interface and its kernels.
//
// Note [Choosing the target]
// The session's device chooses the target (targetFor): the step compiler
// asks for the target of the device its graph's tensors live on and hands it
// to the pipeline (sinter/Compiler/Pipeline.h), which names no target
// itself. A CUDA device with neither a GPU nor the CUDA simulator is refused
// there, with the driver's reason, before anything is lowered. The CPU
// target is one per x86-64 level the kernels are built for ("native" or an
// artifact's level); the CUDA target one per GPU architecture, and one for
// the simulator.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_TARGET_H
#define SINTER_CODEGEN_TARGET_H

#include "sinter/Codegen/KernelPlan.h"
#include "sinter/Dialect/Sinter/SinterOps.h"
#include "sinter/Passes/FusionPolicy.h"
#include "sinter/Passes/MemoryRules.h"
#include "sinter/runtime/Device.h"
#include "sinter/runtime/Gemm.h"
#include "sinter/runtime/LaunchShape.h"
#include "sinter/runtime/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sinter::codegen {

/// The target as plain data: what planning and fusion may depend on (as
/// XLA's passes take a device description).
struct TargetDescription {
  /// "cpu", later "cuda".
  std::string name;
  /// The kind of device its Programs run on.
  runtime::DeviceKind device = runtime::DeviceKind::Cpu;
  /// Every buffer's offset in the arena is a multiple of this (64 bytes on
  /// the CPU, a cache line and an AVX-512 vector; GPUs use 256).
  int64_t alignment = 64;
  /// The file suffix of its kernels' source (debug dumps): ".cpp", ".cu".
  std::string sourceSuffix = ".cpp";
  /// Whether a step's results are planned in its arena and handed out of it
  /// (Note [Results in the arena] in sinter/runtime/Program.h): the host's
  /// allocator splits the arena's block so each result keeps its part. A
  /// CUDA device's memory is not split yet, so there a result is the
  /// caller's, as an argument is: memory of its own that the kernels write.
  bool resultsInArena = true;
};

/// A module's kernels, written out: kernel k (in program order: each
/// sinter.fusion and each library op) is `<prefix><k>` in `source`.
struct RenderedKernels {
  std::string source;
  std::string prefix;
  int64_t count = 0;
  /// Per kernel, the bytes of each scratch buffer it takes after its
  /// results (their contents need not survive a call).
  std::vector<std::vector<int64_t>> scratch;
  /// Per kernel, a fusion's plan (what it was written from; planning asks
  /// it which results may be written over which inputs), none for a
  /// library op: each fusion is planned once per compile.
  std::vector<std::optional<KernelPlan>> plans;
  /// Per kernel, the shape it is launched on (Note [Launch shapes] in
  /// sinter/runtime/LaunchShape.h), copied into its Program step; empty
  /// when every kernel takes the default (one thread: the CPU).
  std::vector<runtime::LaunchShape> shapes;
  /// The CPU the kernels are built for (-march): "native" (this machine,
  /// the default) or an x86-64 level ("x86-64-v3"): an artifact's. Set by
  /// the CPU target that rendered them.
  std::string cpu = "native";
};

/// An op that runs as a library call of the Program rather than as a
/// kernel: a matrix product (Note [Matrix products as data] in
/// sinter/runtime/Gemm.h).
struct LibraryStep {
  runtime::Gemm gemm;
  runtime::HostGemmChoice host; // the CPU's library and threads
  /// The op's operands in the call's order (A, B[, bias]).
  std::vector<unsigned> operands;
};

/// Rendered kernels, built: what a runtime Program loads
/// (Program::library).
struct BuiltKernels {
  std::string path; // the CPU's shared library
  bool cacheHit = false;
};

class Target {
public:
  virtual ~Target() = default;
  virtual const TargetDescription &description() const = 0;

  /// Whether `op`, outside a fusion, is run by a library kernel (matmul,
  /// convolutions, ...) rather than being fused.
  virtual bool isLibraryCall(mlir::Operation *op) const = 0;
  /// The library call `op` runs as, when it is one (render() writes no
  /// kernel for it).
  virtual std::optional<LibraryStep> libraryStep(mlir::Operation *op) const = 0;
  /// The plan of `fusion`'s kernel on this target (Note [Kernel plans] in
  /// sinter/Codegen/KernelPlan.h): what render() writes the kernel from and
  /// keeps in RenderedKernels::plans, where planning asks which results may
  /// be written over which inputs (Notes [Donation] and [In-place kernels]
  /// in sinter/Passes/BufferAssignment.h).
  virtual KernelPlan planKernel(ir::FusionOp fusion) const = 0;
  /// The bytes the device's allocator takes for a block of `bytes`.
  virtual int64_t allocationSize(int64_t bytes) const = 0;
  /// What the kernel of `op` (a fusion or a library kernel) takes beyond
  /// its results, as buffer assignment will count it: the in-place pairs of
  /// its plan and its scratch buffers. Asked by the rematerialization pass
  /// (memoryRules), so that it simulates the arena as it is planned.
  virtual passes::KernelMemory kernelMemory(mlir::Operation *op) const = 0;

  /// Writes every kernel under `module`. Fails, with a diagnostic at the
  /// op, on what the target does not support.
  virtual mlir::FailureOr<RenderedKernels> render(mlir::ModuleOp module) const = 0;
  /// Builds rendered kernels (or finds them in the disk cache).
  virtual StatusOr<BuiltKernels> build(const RenderedKernels &kernels) const = 0;
};

/// The analysis every target's planKernel runs (Note [Kernel plans] in
/// sinter/Codegen/KernelPlan.h), made with the target's choices, which the
/// plan records (Note [Plan choices]).
KernelPlan planFusion(ir::FusionOp fusion, const KernelPlan::Choices &choices);

/// The host CPU: C++ kernels (OpenMP, vectorised loops) built by the host
/// compiler for `cpu` ("native": this machine; or an x86-64 level,
/// "x86-64-v3"), matrix products through oneDNN and OpenBLAS, buffers in
/// the HostAllocator's size classes. One object per level, for the
/// process's life.
const Target &cpuTarget(const std::string &cpu = "native");

/// NVIDIA GPUs (Note [The CUDA target] in compiler/lib/Codegen/CudaTarget.cpp):
/// the CUDA renderer's kernels, built for the CUDA simulator (`arch` 0) or
/// by NVRTC into a cubin for compute capability `arch` (90: sm_90); its
/// Programs run on a runtime::CudaDevice (sinter/runtime/CudaExecutable.h).
/// One object per architecture, for the process's life.
const Target &cudaTarget(int arch = 0);

/// The target of `device`'s kind (Note [Choosing the target]); CPU kernels
/// built for `cpu`; CUDA kernels for the CUDA simulator where it stands for
/// the device (SINTER_CUDA_SIMULATOR), else for the architecture of the
/// first GPU the driver reports. Without a GPU (no driver, no device), a
/// FailedPrecondition Status that names what is missing.
StatusOr<const Target *> targetFor(runtime::DeviceKind device, const std::string &cpu = "native");

/// What the memory-planning passes ask of `target` (Note [One memory model]
/// in sinter/Passes/MemoryPlanner.h): its kernels' in-place pairs and
/// scratch, its size classes and alignment. Holds a reference to `target`.
passes::MemoryRules memoryRules(const Target &target);

/// What fusion asks of `target` (Note [Fusion asks the target] in
/// sinter/Passes/FusionPolicy.h): which ops it runs as library calls.
/// Holds a reference to `target`.
fusion::FusionRules fusionRules(const Target &target);

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_TARGET_H
