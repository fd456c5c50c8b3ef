//===- Step.h - what the frontend's files share about a step ---*- C++ -*-===//
//
// The frontend's own split (not installed): tensors (Tensor.cpp), the step
// and its compiler (Step.cpp), sessions (Session.cpp), the metrics
// (Metrics.cpp), factories and random numbers (Factories.cpp, Random.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_LIB_STEP_H
#define SINTER_LIB_STEP_H

#include "TensorImpl.h"
#include "sinter/Compiler.h"
#include "sinter/Metrics.h"

#include <memory>
#include <string>
#include <vector>

namespace sinter::detail {

// Tensor.cpp
/// Every live tensor that is not computed yet: what mark_step() computes.
std::vector<std::shared_ptr<TensorImpl>> pendingTensors();

// Factories.cpp
/// Throws sinter::Error at `loc` for a shape with a negative size.
void checkShape(const char *op, const Shape &shape, Loc loc);

// Step.cpp
/// The value of a tensor that is read (to_vector, item, printing), at the
/// user's `loc`.
std::shared_ptr<const lazy::Value> valueOf(const Tensor &tensor, Loc loc);
/// A value's elements and bytes in host memory, for the user's read at
/// `loc`: a value on a CUDA device is copied to the host (Note [Two forms of
/// a value]); a copy that fails (a fault of a kernel queued before it: Note
/// [Steps in stream order]) throws sinter::Error at `loc`.
const std::vector<double> &hostElements(const lazy::Value &value, Loc loc);
const uint8_t *hostBytes(const lazy::Value &value, Loc loc);

// Distributed.cpp
/// Note [The same step on every rank] (in Distributed.cpp): throws at `loc`,
/// naming the first difference, when the ranks of the current process
/// group recorded different graphs for a step with collectives; `what` is
/// "mark_step" or "reading a tensor".
void checkSameStepOnEveryRank(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
                              const char *what, Loc loc);

// Metrics.cpp
/// Counts this step's graph and, when the step at `loc` changed structure,
/// says why (on stderr too at `debug` level 1 and above); returns the
/// graph's structure hash.
uint64_t recordStep(const std::vector<lazy::NodePtr> &outputs, int debug, Loc loc);
/// Says when the same graph gives other inputs' memory to its results.
void recordDonation(uint64_t structure, const std::vector<const lazy::Node *> &inputs,
                    std::vector<bool> mask, int debug, Loc loc);
/// Adds what one run did to the metrics (`seconds` in all).
void addRun(const StepMetrics &step, double seconds);
/// Counts a finished mark_step(): compiled (whole, `enabled`) or eager, and
/// a compiled step's memory.
void recordStepEnd(bool compiled, bool enabled, const StepMemory &memory);
/// Note [Fallbacks are said].
void noteFallback(const std::string &why, const CompilerConfig &config, const char *what, Loc loc);
/// Prints the metrics report at exit (registered once).
void printMetricsAtExit();

} // namespace sinter::detail

#endif // SINTER_LIB_STEP_H
