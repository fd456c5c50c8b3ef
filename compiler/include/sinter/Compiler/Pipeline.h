//===- Pipeline.h - compile lazy graphs into runtime Programs ---*- C++ -*-===//
#ifndef SINTER_COMPILER_PIPELINE_H
#define SINTER_COMPILER_PIPELINE_H

#include "sinter/Metrics.h"
#include "sinter/lazy/Node.h"
#include "sinter/runtime/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinter::codegen {
class Target;
} // namespace sinter::codegen

namespace sinter::compiler {

/// What to show of a compilation (SINTER_DEBUG, SINTER_DUMP_DIR).
struct DebugOptions {
  /// 2: fusion groups with the reason for every refusal; 3: also the
  /// generated kernel source; 4: also the IR after every pass.
  int level = 0;
  /// Where the files go (`<tag>.fusion.txt`, `<tag>.kernels.cpp`,
  /// `<tag>.passes.mlir`, `<tag>.mlir`); empty: stderr.
  std::string dumpDir;
  /// Names this compilation's files.
  std::string tag = "step";
};

/// What compiling a step for a target produced.
struct StepBuild {
  std::string ir;           // the module after the pipeline
  int64_t kernels = 0;      // kernels rendered (fusions and library ops)
  std::string library;      // the built kernels (BuiltKernels::path)
  bool cacheHit = false;    // the kernels came from the disk cache
  runtime::Program program; // the launches, ready for the target's executable
  std::string source;       // the kernels' source
  CompileSeconds times;     // by phase
};

// The target is the caller's (Note [Choosing the target] in
// sinter/Codegen/Target.h): nothing below names one.

/// Lowers the graph of `outputs`, runs the pipeline, renders every kernel
/// (fusions and library ops) for `target`, builds them, and translates the
/// function into a runtime Program: arguments are the graph's data nodes in
/// lazy::topological_order, results are `outputs`. Returns false with the
/// diagnostics in `error`.
bool compileStep(const std::vector<lazy::NodePtr> &outputs, const codegen::Target &target,
                 StepBuild &step, std::string &error, const DebugOptions &debug = {});

/// The same for several graphs at once (eager mode's one-op programs): one
/// module, one kernel library, one Program per graph, in `programs`.
/// `step` describes the whole build (its `program` is left empty).
/// `donatable`, when given, says per graph and per argument whether the
/// argument's memory may be written over by a result (Note [Donation]).
/// `memoryBudget`: see sinter::passes::PipelineOptions.
bool compileGraphs(const std::vector<std::vector<lazy::NodePtr>> &graphs,
                   const codegen::Target &target, std::vector<runtime::Program> &programs,
                   StepBuild &step, std::string &error, const DebugOptions &debug = {},
                   const std::vector<std::vector<bool>> *donatable = nullptr,
                   int64_t memoryBudget = 0);

/// The program of one step and its memory plan, without building its kernels
/// (no host compiler): what planning a batch size needs. The program's
/// library is empty; it cannot run.
bool planStep(const std::vector<lazy::NodePtr> &outputs, const codegen::Target &target,
              runtime::Program &program, StepBuild &step, std::string &error,
              const std::vector<bool> *donatable = nullptr, int64_t memoryBudget = 0);

/// A step's kernels as CUDA C++ (Note [The CUDA renderer] in
/// sinter/Codegen/CudaRenderer.h): kernel k is `sinter_kernel_<k>`.
struct CudaStepSource {
  std::string source;
  /// The step's kernels (fusions and library ops), and the names of those
  /// the CUDA renderer wrote.
  int64_t kernels = 0;
  std::vector<std::string> written;
};

/// Lowers the graph of `outputs` and runs the pipeline as compileStep does,
/// then writes each fusion with the CUDA renderer where it can (nothing is
/// built). Returns false with the diagnostics in `error`.
bool renderCudaStep(const std::vector<lazy::NodePtr> &outputs, CudaStepSource &step,
                    std::string &error);

} // namespace sinter::compiler

#endif // SINTER_COMPILER_PIPELINE_H
