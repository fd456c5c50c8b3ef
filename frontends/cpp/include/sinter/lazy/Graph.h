//===- Graph.h - the structure of a recorded graph ------------------------===//
//
// Note [Graph structure]
// Two steps of a training loop record graphs of the same structure: the same
// ops, attributes, shapes, dtypes and wiring, over different data. The
// structure is what the executable cache is keyed by, so it leaves out what
// changes every step without changing the program: data values, source
// locations, and the seed and stream of random ops (inputs of the program,
// like the data). Constants (full) are part of it: a value that changes every
// step should be a data tensor (the optimizers pass their learning rates so).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_LAZY_GRAPH_H
#define SINTER_LAZY_GRAPH_H

#include "sinter/lazy/Node.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinter::lazy {

/// The graph computing `outputs`, in an order where operands come first
/// (outputs in order, operands in order: deterministic for one structure).
std::vector<const Node *> topological_order(const std::vector<NodePtr> &outputs);

/// A fingerprint of the graph's structure (see Note [Graph structure]); equal
/// for graphs of equal structure within one process.
uint64_t structural_hash(const std::vector<NodePtr> &outputs);

/// The first structural difference between the graph of `before` and that of
/// `now`, in one line that names the op or input and the user's file:line of
/// `now`; empty when their structure is equal.
std::string first_difference(const std::vector<NodePtr> &before, const std::vector<NodePtr> &now);

} // namespace sinter::lazy

#endif // SINTER_LAZY_GRAPH_H
