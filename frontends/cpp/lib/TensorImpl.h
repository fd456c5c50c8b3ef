//===- TensorImpl.h - what a Tensor handle points to ----------------------===//
#ifndef SINTER_LIB_TENSORIMPL_H
#define SINTER_LIB_TENSORIMPL_H

#include "sinter/Tensor.h"
#include "sinter/lazy/Node.h"

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

/// SINTER_ELEMENT_TYPES(X) calls X(T) for each C++ element type a tensor is
/// read into or made from (to_vector, item, from_vector): their explicit
/// instantiations, one list.
#define SINTER_ELEMENT_TYPES(X) X(float) X(double) X(int32_t) X(int64_t) X(bool)

namespace sinter {

/// The backward function of one recorded op: given the gradient of its
/// result, returns the gradients of its inputs (undefined where an input
/// needs none). Backward ops are themselves recorded lazily, so a whole
/// training step, backward included, is one graph.
struct GradFn {
  std::string_view name;
  std::source_location loc;
  /// The op's tensor inputs; null where the input needs no gradient.
  std::vector<std::shared_ptr<TensorImpl>> inputs;
  std::function<std::vector<Tensor>(const Tensor &gradOutput)> backward;
  /// Where a backward() freed this function (its saved tensors and inputs
  /// are gone); unset while it can run.
  std::optional<std::source_location> freedAt;
};

struct TensorImpl {
  explicit TensorImpl(lazy::NodePtr node)
      : node(std::move(node)), shape(this->node->shape), dtype(this->node->dtype) {}
  /// The tensor's node. A step replaces the node of every pending tensor,
  /// whichever thread made it: read it through detail::nodeOf and replace it
  /// through detail::setNode, unless this thread holds a GraphStep (Note
  /// [Threads and the lazy graph]).
  lazy::NodePtr node;
  /// What no node replacement changes (copy_ keeps both; a step keeps both),
  /// read without the graph's lock.
  const Shape shape;
  const DType dtype;
  bool requiresGrad = false;
  /// Null for leaves (tensors the user made, or results recorded without grad).
  std::shared_ptr<GradFn> gradFn;
  /// The accumulated gradient of a leaf.
  std::shared_ptr<TensorImpl> grad;
};

namespace detail {

/// Holds the lazy graph for a step: every other thread's reading of a
/// tensor's node waits until it ends (Note [Threads and the lazy graph]).
/// Nests on one thread.
class GraphStep {
public:
  GraphStep();
  ~GraphStep();
  GraphStep(const GraphStep &) = delete;
  GraphStep &operator=(const GraphStep &) = delete;
};

/// `impl`'s node, read under the graph's shared lock.
lazy::NodePtr nodeOf(const TensorImpl &impl);
inline lazy::NodePtr nodeOf(const Tensor &tensor) { return nodeOf(*tensor.impl()); }

/// Replaces `impl`'s node (an in-place update), holding the graph.
void setNode(TensorImpl &impl, lazy::NodePtr node);

/// `impl`'s value if it is known (computed or data), else null.
std::shared_ptr<const lazy::Value> knownValue(const TensorImpl &impl);

/// Records a node and returns a tensor for it. `operands` are the operands'
/// nodes; shape and dtype are the result's (already checked by the caller).
Tensor record(lazy::Op op, lazy::Attrs attrs, std::vector<lazy::NodePtr> operands, Shape shape,
              DType dtype, Device device, Loc loc);

/// A new handle (no autograd history) for an existing node, registered so
/// that mark_step() computes it and cuts the graph behind it.
Tensor wrap(lazy::NodePtr node);

/// A tensor holding computed values.
Tensor fromValue(std::shared_ptr<const lazy::Value> value, Shape shape, DType dtype, Device device,
                 Loc loc);

/// Whether an op on these inputs records a gradient function: grad mode is
/// on and an input requires a gradient. Checked before building the
/// function, so that recording without gradients allocates nothing for it.
template <typename... Ts> bool needsGrad(const Ts &...inputs) {
  return grad_enabled() && (inputs.requires_grad() || ...);
}
inline bool needsGrad(const std::vector<Tensor> &inputs) {
  if (!grad_enabled())
    return false;
  for (const Tensor &input : inputs)
    if (input.requires_grad())
      return true;
  return false;
}

/// When grad mode is on and an input requires a gradient, makes `result`
/// require one too, with `backward` as its gradient function.
void attachGrad(Tensor &result, std::string_view name, const std::vector<Tensor> &inputs,
                std::function<std::vector<Tensor>(const Tensor &)> backward, Loc loc);

/// Computes `tensor` (and what it depends on) on the reference executor.
std::shared_ptr<const lazy::Value> evaluate(const Tensor &tensor);

/// Computes the pending `outputs` of a step on the reference executor, all in
/// one pass; a value nothing outside the step holds is freed after its last
/// consumer has run (Note [The reference step frees what it no longer needs]).
void evaluateStep(const std::vector<lazy::NodePtr> &outputs);

/// Rounds `x` to what an element of `dtype` can hold.
double roundTo(DType dtype, double x);

} // namespace detail
} // namespace sinter

#endif // SINTER_LIB_TENSORIMPL_H
