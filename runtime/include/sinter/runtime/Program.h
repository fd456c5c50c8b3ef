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

/// A Program loaded for the CPU: its kernels resolved and its buffers
/// allocated once, reused by every run.
class CpuExecutable {
public:
  static StatusOr<std::unique_ptr<CpuExecutable>> load(Program program);
  ~CpuExecutable();
  CpuExecutable(const CpuExecutable &) = delete;
  CpuExecutable &operator=(const CpuExecutable &) = delete;

  /// Runs the step. `arguments[i]` holds the bytes of argument i (its size
  /// must match); on return `results[i]` holds result i. Where `unchanged`
  /// is given and true for an argument, its bytes are those of the previous
  /// run and are not copied again (a dataset, frozen weights).
  Status run(const std::vector<const void *> &arguments, const std::vector<int64_t> &argumentBytes,
             std::vector<std::vector<uint8_t>> &results,
             const std::vector<bool> *unchanged = nullptr);

  const Program &program() const { return program_; }

private:
  using Kernel = void (*)(const void *const *, void *const *);
  CpuExecutable() = default;

  Program program_;
  void *handle_ = nullptr;
  std::vector<Kernel> kernels_;
  std::vector<std::vector<uint8_t>> storage_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_PROGRAM_H
