//===- CpuTuning.h - sizes the CPU kernels are tuned for ---------*- C++ -*-===//
//
// Shared by the kernel plan's analysis (KernelPlan.cpp), which decides with
// them, and the CPU renderer (compiler/lib/Renderers/CpuRenderer.cpp), which
// writes loops with them.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_CPUTUNING_H
#define SINTER_CODEGEN_CPUTUNING_H

#include <cstdint>

namespace sinter::codegen::cpu {

/// Partial results of a row reduction: one AVX2 vector of floats.
inline constexpr int64_t kLanes = 8;
/// Rows an output loop over rows of columns needs (else it is one loop over
/// all elements, which OpenMP splits however long its rows are).
inline constexpr int64_t kMinRows = 16;
/// Columns one thread reduces together in a column reduction.
inline constexpr int64_t kColumnBlock = 64;
/// Bytes of row values a row kernel keeps on each thread's stack (OpenMP's
/// worker threads have a few MiB of stack); past it, values go to scratch.
inline constexpr int64_t kRowStackBytes = 256 * 1024;

} // namespace sinter::codegen::cpu

#endif // SINTER_CODEGEN_CPUTUNING_H
