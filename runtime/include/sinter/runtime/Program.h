//===- Program.h - a compiled step: kernel launches over buffers ----------===//
//
// The runtime's view of a compiled step, plain data with no MLIR: buffers
// (one per value for now; memory planning assigns them offsets in one arena
// later), splat constants to fill, and the kernel launches in order. A
// CpuExecutable loads the kernel library and runs the launches.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_PROGRAM_H
#define SINTER_RUNTIME_PROGRAM_H

#include "sinter/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sinter::runtime {

struct Program {
  struct Buffer {
    int64_t bytes = 0;
  };
  /// A buffer filled with one element, repeated (a splat constant).
  struct Fill {
    int buffer = 0;
    std::vector<uint8_t> element;
  };
  /// Kernel `kernel` (named `<kernelPrefix><kernel>` in the library) reads
  /// `inputs` and writes `outputs`, in its operands' and results' order.
  struct Launch {
    int kernel = 0;
    std::vector<int> inputs;
    std::vector<int> outputs;
  };

  std::vector<Buffer> buffers;
  std::vector<Fill> fills;
  std::vector<Launch> launches;
  /// The buffer of each argument and of each result of the step.
  std::vector<int> arguments;
  std::vector<int> results;
  /// The shared library with the kernels.
  std::string library;
  std::string kernelPrefix;
};

/// A Program loaded for the CPU: its kernels resolved and its own buffers
/// (everything but arguments and results) laid out once in one arena from
/// the HostAllocator, 64-byte aligned, reused by every run.
class CpuExecutable {
public:
  static StatusOr<std::unique_ptr<CpuExecutable>> load(Program program);
  ~CpuExecutable();
  CpuExecutable(const CpuExecutable &) = delete;
  CpuExecutable &operator=(const CpuExecutable &) = delete;

  /// Runs the step. `arguments[i]` points at argumentBytes(i) bytes of
  /// argument i, read only and held by the caller during the run;
  /// `results[i]` at resultBytes(i) bytes for result i, which the run
  /// writes. Kernels write results in place; a result that no kernel
  /// computes (an argument returned as is, a constant) is copied there.
  Status run(const std::vector<const void *> &arguments, const std::vector<void *> &results);

  int64_t argumentBytes(size_t i) const { return bytesOf(program_.arguments[i]); }
  int64_t resultBytes(size_t i) const { return bytesOf(program_.results[i]); }
  /// Bytes of the arena (the step's own buffers).
  int64_t arenaBytes() const { return arenaBytes_; }
  const Program &program() const { return program_; }

private:
  using Kernel = void (*)(const void *const *, void *const *);
  CpuExecutable() = default;
  int64_t bytesOf(int buffer) const { return program_.buffers[buffer].bytes; }

  Program program_;
  void *handle_ = nullptr;
  std::vector<Kernel> kernels_;
  uint8_t *arena_ = nullptr; // from HostAllocator
  int64_t arenaBytes_ = 0;
  /// Each buffer's address in the arena; null for arguments and for results
  /// that kernels write in place (bound per run).
  std::vector<uint8_t *> address_;
  /// Per result: true when a kernel writes it in place.
  std::vector<bool> inPlace_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_PROGRAM_H
