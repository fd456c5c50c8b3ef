//===- LowerLazyGraph.h - from the lazy graph to the sinter dialect -*- C++ -*-===//
//
// The first stage of compilation: a recorded graph (plain C++ nodes) becomes
// one func.func in the sinter dialect. Data nodes become the function's
// arguments, in lazy::topological_order; the requested outputs are its
// results. Every op keeps the user's source line as its location.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_COMPILER_LOWERLAZYGRAPH_H
#define SINTER_COMPILER_LOWERLAZYGRAPH_H

#include "sinter/lazy/Node.h"

#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class ModuleOp;
template <typename OpTy> class OwningOpRef;
} // namespace mlir

namespace sinter::compiler {

/// Lowers the graph that computes `outputs` into a module with one function
/// named `name`, and verifies it. Returns null (after reporting diagnostics
/// through the context) when the graph does not verify: a frontend bug.
/// REQUIRES: the context has the sinter and func dialects loaded.
mlir::OwningOpRef<mlir::ModuleOp> lowerLazyGraph(mlir::MLIRContext &context,
                                                 const std::vector<lazy::NodePtr> &outputs,
                                                 const std::string &name = "step");

/// The same, printed as MLIR text (with source locations when `withLocations`);
/// on failure, returns false and puts the diagnostics in `text`. For callers
/// without MLIR headers (tools, debug dumps).
bool lowerLazyGraphToText(const std::vector<lazy::NodePtr> &outputs, std::string &text,
                          bool withLocations = false, const std::string &name = "step");

} // namespace sinter::compiler

#endif // SINTER_COMPILER_LOWERLAZYGRAPH_H
