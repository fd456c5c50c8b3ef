//===- Pipeline.h - the compiler's pass pipeline, as one chain --*- C++ -*-===//
#ifndef SINTER_COMPILER_PIPELINE_H
#define SINTER_COMPILER_PIPELINE_H

#include "sinter/lazy/Node.h"
#include "sinter/runtime/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace sinter::compiler {

/// The passes from a lowered step to fused kernels, in order: canonicalize,
/// CSE, fusion, canonicalize. (Decomposition, rematerialization, scheduling
/// and buffer assignment join this chain as they are written.)
void buildPipeline(mlir::OpPassManager &pm);

/// What compiling a step for the CPU produced.
struct CpuStep {
  std::string ir;           // the module after the pipeline
  int64_t kernels = 0;      // sinter.fusion regions rendered
  std::string library;      // the compiled kernel library
  bool cacheHit = false;    // the library came from the disk cache
  runtime::Program program; // the launches, ready for runtime::CpuExecutable
};

/// Lowers the graph of `outputs`, runs the pipeline, renders every kernel
/// (fusions and library ops) as C++, compiles them into one library, and
/// translates the function into a runtime Program: arguments are the graph's
/// data nodes in lazy::topological_order, results are `outputs`. Returns
/// false with the diagnostics in `error`.
bool compileStepForCpu(const std::vector<lazy::NodePtr> &outputs, CpuStep &step,
                       std::string &error);

} // namespace sinter::compiler

#endif // SINTER_COMPILER_PIPELINE_H
