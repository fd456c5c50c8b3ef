//===- PassPipeline.h - the passes from a lowered step to kernels -*- C++ -*-===//
#ifndef SINTER_PASSES_PASSPIPELINE_H
#define SINTER_PASSES_PASSPIPELINE_H

#include "sinter/Passes/FusionPolicy.h"
#include "sinter/Passes/MemoryRules.h"

#include <cstdint>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace sinter::passes {

/// How to compile, beyond what to show.
struct PipelineOptions {
  /// Report every fusion and rematerialization decision as a remark.
  bool explain = false;
  /// Bytes the step's own memory (what its kernels write, results included)
  /// should fit in, by recomputing instead of keeping (Note
  /// [Rematerialization] in passes/lib/Rematerialize.cpp); 0: no budget
  /// (only free recomputation).
  int64_t memoryBudget = 0;
  /// What the rematerialization pass asks of the target, so that its
  /// estimate is the arena buffer assignment plans (Note [One memory model]
  /// in sinter/Passes/MemoryPlanner.h); empty: only the values' bytes.
  MemoryRules memory = {};
  /// What fusion asks of the target (Note [Fusion asks the target] in
  /// sinter/Passes/FusionPolicy.h); empty: the ops' structure alone.
  fusion::FusionRules fusion = {};
};

/// The passes from a lowered step to fused kernels, in order: canonicalize,
/// CSE, fusion, canonicalize, scheduling for memory, rematerialization,
/// canonicalize (the clones' unread results dropped), and a copy for each
/// returned slice. Buffer assignment follows on the translated Program
/// (sinter/Passes/BufferAssignment.h).
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options = {});

/// Registers buildPipeline as `sinter-pipeline` (options `budget=` and
/// `explain=`), for `sinter-opt --sinter-pipeline` and
/// `--pass-pipeline='builtin.module(sinter-pipeline{budget=1048576})'`.
void registerPipeline();

} // namespace sinter::passes

#endif // SINTER_PASSES_PASSPIPELINE_H
