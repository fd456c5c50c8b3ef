//===- TensorDump.h - tensors as raw files for PyTorch ----------*- C++ -*-===//
//
// The exchange format between Sinter's tools and tests and their PyTorch
// counterparts (benchmarks/torch_zoo.py `load`): a folder of raw
// little-endian files `<kind>.<name>.bin` (integers as i64, the rest as f32)
// and a `manifest.txt` with one line `<kind> <name> <i64|f32> <dims...>` per
// tensor.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_TENSORDUMP_H
#define SINTER_TOOLS_TENSORDUMP_H

#include "sinter/sinter.h"

#include <fstream>
#include <string>

namespace sinter::tools {

class TensorDump {
public:
  /// Creates `dir` if needed; throws sinter::Error if it cannot be written.
  explicit TensorDump(const std::string &dir);
  void write(const std::string &kind, const std::string &name, const Tensor &tensor);

private:
  std::string dir_;
  std::ofstream manifest_;
};

} // namespace sinter::tools

#endif // SINTER_TOOLS_TENSORDUMP_H
