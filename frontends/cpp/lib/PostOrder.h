//===- PostOrder.h - depth-first post-order of a DAG, without recursion ---===//
//
// Graphs of a training step are thousands of nodes deep, so every traversal
// is iterative. One helper serves the lazy graph (operands) and the autograd
// graph (gradient-function inputs).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_LIB_POSTORDER_H
#define SINTER_LIB_POSTORDER_H

#include <unordered_set>
#include <utility>
#include <vector>

namespace sinter::detail {

/// The nodes reachable from `roots`, each after all its children and once:
/// roots in order, children in the order `forEachChild(node, visit)` visits
/// them. Deterministic for a given graph.
template <typename Node, typename ForEachChild>
std::vector<Node *> postOrder(const std::vector<Node *> &roots, ForEachChild forEachChild) {
  std::vector<Node *> order;
  std::unordered_set<Node *> visited;
  std::vector<std::pair<Node *, bool>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it)
    stack.push_back({*it, false});
  std::vector<Node *> children;
  while (!stack.empty()) {
    auto [node, done] = stack.back();
    stack.pop_back();
    if (done) {
      order.push_back(node);
      continue;
    }
    if (!visited.insert(node).second)
      continue;
    stack.push_back({node, true});
    children.clear();
    forEachChild(node, [&](Node *child) { children.push_back(child); });
    for (auto it = children.rbegin(); it != children.rend(); ++it)
      if (!visited.count(*it))
        stack.push_back({*it, false});
  }
  return order;
}

} // namespace sinter::detail

#endif // SINTER_LIB_POSTORDER_H
