//===- Graph.cpp - the structure of a recorded graph ----------------------===//
#include "sinter/lazy/Graph.h"

#include "../Format.h"
#include "../PostOrder.h"

#include "absl/hash/hash.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace sinter::lazy {
namespace {

/// The words describing one node's structure, with its operands given by
/// their positions in the topological order.
std::vector<int64_t> describe(const Node &node,
                              const std::unordered_map<const Node *, int64_t> &position) {
  std::vector<int64_t> words = {static_cast<int64_t>(node.op), static_cast<int64_t>(node.dtype),
                                static_cast<int64_t>(node.device.kind()), node.device.index(),
                                static_cast<int64_t>(node.shape.size())};
  words.insert(words.end(), node.shape.begin(), node.shape.end());
  const Attrs &a = node.attrs;
  for (const std::vector<int64_t> *list : {&a.dims, &a.dims2, &a.dims3}) {
    words.push_back(static_cast<int64_t>(list->size()));
    words.insert(words.end(), list->begin(), list->end());
  }
  words.push_back(a.axis);
  int64_t valueBits;
  static_assert(sizeof(valueBits) == sizeof(a.value));
  std::memcpy(&valueBits, &a.value, sizeof(valueBits));
  words.push_back(valueBits);
  words.push_back(a.kind);
  words.push_back(a.flag);
  words.push_back(a.flag2);
  words.push_back(static_cast<int64_t>(node.operands.size()));
  for (const NodePtr &operand : node.operands)
    words.push_back(position.at(operand.get()));
  return words;
}

std::string where(const Node &node) { return cat(node.loc.file_name(), ":", node.loc.line()); }

} // namespace

std::vector<const Node *> topological_order(const std::vector<NodePtr> &outputs) {
  std::vector<const Node *> roots;
  for (const NodePtr &output : outputs)
    roots.push_back(output.get());
  return detail::postOrder(roots, [](const Node *node, auto visit) {
    for (const NodePtr &operand : node->operands)
      visit(operand.get());
  });
}

uint64_t structural_hash(const std::vector<NodePtr> &outputs) {
  std::vector<const Node *> order = topological_order(outputs);
  std::unordered_map<const Node *, int64_t> position;
  std::vector<int64_t> words;
  for (const Node *node : order) {
    std::vector<int64_t> own = describe(*node, position);
    words.insert(words.end(), own.begin(), own.end());
    position[node] = static_cast<int64_t>(position.size());
  }
  for (const NodePtr &output : outputs)
    words.push_back(position.at(output.get()));
  return absl::Hash<std::vector<int64_t>>{}(words);
}

std::string first_difference(const std::vector<NodePtr> &before, const std::vector<NodePtr> &now) {
  std::vector<const Node *> a = topological_order(before), b = topological_order(now);
  std::unordered_map<const Node *, int64_t> posA, posB;
  int64_t input = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const Node &x = *a[i], &y = *b[i];
    bool isInput = y.op == Op::Data;
    std::string what = isInput ? cat("input #", input, " (", where(y), ")")
                               : cat("op '", name(y.op), "' at ", where(y));
    if (x.op != y.op)
      return cat("op '", name(x.op), "' became '", name(y.op), "' at ", where(y));
    if (x.shape != y.shape)
      return cat(what, " has shape ", toString(y.shape), ", was ", toString(x.shape));
    if (x.dtype != y.dtype)
      return cat(what, " has dtype ", name(y.dtype), ", was ", name(x.dtype));
    if (!(x.device == y.device))
      return cat(what, " is on ", y.device.toString(), ", was on ", x.device.toString());
    if (describe(x, posA) != describe(y, posB))
      return cat(what, " has different attributes or operands",
                 x.op == Op::Full ? cat(" (value ", y.attrs.value, ", was ", x.attrs.value, ")")
                                  : "");
    posA[&x] = posB[&y] = static_cast<int64_t>(i);
    input += isInput;
  }
  if (a.size() != b.size())
    return cat("the graph has ", b.size(), " nodes, was ", a.size());
  for (size_t i = 0; i < before.size() && i < now.size(); ++i)
    if (posA.at(before[i].get()) != posB.at(now[i].get()))
      return cat("output #", i, " is computed by a different node");
  if (before.size() != now.size())
    return cat("the step has ", now.size(), " outputs, was ", before.size());
  return "";
}

} // namespace sinter::lazy
