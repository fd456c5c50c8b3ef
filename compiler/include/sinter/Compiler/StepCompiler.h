//===- StepCompiler.h - mark_step's compiler for the CPU --------*- C++ -*-===//
#ifndef SINTER_COMPILER_STEPCOMPILER_H
#define SINTER_COMPILER_STEPCOMPILER_H

namespace sinter::compiler {

/// Registers the CPU step compiler with the frontend, so that mark_step()
/// runs steps compiled when sinter::CompilerConfig::enabled is set: each graph
/// structure is compiled once (lowering, the pass pipeline, kernels through
/// the host compiler and its disk cache) and its executable reused.
void install();

} // namespace sinter::compiler

#endif // SINTER_COMPILER_STEPCOMPILER_H
