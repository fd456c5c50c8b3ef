//===- Compiler.h - running steps compiled --------------------------------===//
//
// With the compiler enabled, mark_step() hands each step's graph to the
// registered step compiler, which compiles it once per graph structure (the
// executable cache, keyed as in sinter/lazy/Graph.h) and runs it; a step it
// cannot compile runs on the reference executor instead, with the reason in
// the metrics. The compiler lives in a separate library (MLIR), which
// registers itself: call sinter::compiler::install() from it
// (sinter/Compiler/StepCompiler.h) before enabling.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_COMPILER_H
#define SINTER_COMPILER_H

#include "sinter/lazy/Node.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sinter {

struct CompilerConfig {
  /// Run steps compiled (SINTER_COMPILER=1 sets it at startup).
  bool enabled = false;
};

void set_compiler_config(const CompilerConfig &config);
CompilerConfig compiler_config();

namespace detail {

/// What the compiler library implements.
class StepCompiler {
public:
  virtual ~StepCompiler() = default;
  /// Computes the values of `outputs` (the pending tensors of one step), or
  /// returns false with the reason when it cannot (the reference executor
  /// then runs the step).
  virtual bool run(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
                   std::vector<std::shared_ptr<const lazy::Value>> &values, std::string &why) = 0;
};

void register_step_compiler(std::shared_ptr<StepCompiler> compiler);
std::shared_ptr<StepCompiler> step_compiler();

} // namespace detail
} // namespace sinter

#endif // SINTER_COMPILER_H
