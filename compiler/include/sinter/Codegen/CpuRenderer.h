//===- CpuRenderer.h - a kernel plan as a C++ function -----------*- C++ -*-===//
//
// The CPU renderer writes a fusion's kernel from its plan alone (Note
// [Kernel plans] in sinter/Codegen/KernelPlan.h; Note [Kernels as functions
// of an index] in sinter/Codegen/CpuKernel.h): no MLIR here, so the CUDA
// renderer that comes next reads the same plan and differs only in what it
// writes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_CPURENDERER_H
#define SINTER_CODEGEN_CPURENDERER_H

#include "sinter/Codegen/KernelPlan.h"

#include <optional>
#include <string>

namespace sinter::codegen {

/// The C++ element type generated code uses for a plan's dtype ("float",
/// "int32_t", "int64_t", "bool"; f16 and bf16: the storage types
/// "sinter_f16" and "sinter_bf16" of kernels/common/half.h), or "" where
/// the renderers have none.
std::string cppElementTypeOf(const std::string &dtype);

/// The type arithmetic on values of element type `t` uses: "float" for the
/// half types (Note [Half precision in kernels]), `t` otherwise.
std::string cppComputeTypeOf(const std::string &t);

/// Bytes of one element of the C++ element type `t` (cppElementTypeOf's).
int64_t cppElementBytes(const std::string &t);

/// Why a renderer refuses a reduction of f16 or bf16 values.
inline constexpr const char *kHalfReduction =
    "a reduction of f16 or bf16 values (reduced in f32: lowering converts them, Note [Half "
    "precision in f32] in LowerLazyGraph.cpp)";

/// Whether a plan's dtype is a floating-point one: "f32", "f16", "bf16".
bool isFloatDtype(const std::string &dtype);

/// What the renderer could not write: the plan's value (an operand index as
/// KernelPlan::Value::operands, so an input is -1 - input), and why.
struct RenderProblem {
  enum class Kind : uint8_t {
    UnsupportedType, // an element type without a C++ type (f64, i8, ...)
    SeveralResults,  // an op of more than one result
    UnsupportedOp,   // an op the renderer has no rule for
    ScratchMismatch, // internal: the kernel's scratch buffers differ from the plan's
    ForeignChoices,  // a plan made with choices the renderer cannot write (another target's)
  };
  Kind kind;
  int value = 0;
  /// What the renderer could not write, in words ("" where the kind says it).
  std::string detail = {};
};

/// The includes every translation unit of kernels starts with: the helpers
/// the kernels use (`sinter_select`, `sinter_exp`, ...: kernels/cpu/kernel.h)
/// and Philox.
std::string cpuKernelPrologue();

/// What CPU kernels are planned with (Note [Plan choices] in
/// sinter/Codegen/KernelPlan.h): 8 lanes (an AVX2 vector of f32), 16 rows,
/// column blocks of 64, 256 KiB of rows on each OpenMP thread's stack (its
/// workers have a few MiB), stored values in scratch.
KernelPlan::Choices cpuPlanChoices();

/// Appends `plan`'s kernel to `source` as
///   extern "C" void <name>(const void *const *inputs, void *const *outputs)
/// (its inputs, then its results followed by the plan's scratch buffers), or
/// returns the first value it cannot write. The loops are written with the
/// plan's choices: a plan without lanes, rows or column blocks (the CUDA
/// target's) is refused (ForeignChoices).
std::optional<RenderProblem> renderCpuKernel(const KernelPlan &plan, const std::string &name,
                                             std::string &source);

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_CPURENDERER_H
