//===- MemoryRules.h - what memory planning asks of the target --*- C++ -*-===//
//
// The rematerialization pass simulates the arena the way buffer assignment
// plans it (Note [One memory model] in sinter/Passes/MemoryPlanner.h), so it
// asks the target what buffer assignment asks: which results a kernel may
// write over which operands, the scratch each kernel takes, the device's
// alignment and the size class a result handed out of the arena keeps.
// Plain C++ (an op is only a pointer here): the target (compiler/) fills it
// in, the passes read it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_MEMORYRULES_H
#define SINTER_PASSES_MEMORYRULES_H

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace sinter::passes {

/// What one kernel (a fusion or a library kernel) takes beyond its results.
struct KernelMemory {
  /// (operand, result) pairs: the kernel reads the operand only at the
  /// index it writes the result (Note [In-place kernels] in
  /// sinter/Passes/BufferAssignment.h).
  std::vector<std::pair<unsigned, unsigned>> inPlace;
  /// Bytes of each scratch buffer, live while the kernel runs.
  std::vector<int64_t> scratch;
};

/// The target's answers. Empty members: no kernel writes in place or takes
/// scratch, and a result keeps its own bytes (what `sinter-opt` assumes).
struct MemoryRules {
  std::function<KernelMemory(mlir::Operation *kernel)> kernel;
  std::function<int64_t(int64_t bytes)> allocationSize;
  int64_t alignment = 1;
  /// Whether results are planned in the arena (else the caller's).
  bool resultsInArena = true;
};

} // namespace sinter::passes

#endif // SINTER_PASSES_MEMORYRULES_H
