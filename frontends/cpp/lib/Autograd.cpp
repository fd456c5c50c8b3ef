//===- Autograd.cpp - reverse-mode differentiation over the lazy graph ----===//
//
// As in PyTorch: an op whose inputs require gradients records a GradFn, and
// backward() walks those functions from the loss in reverse topological
// order, summing the gradients that reach each tensor and accumulating into
// the .grad of leaves. The gradient ops are recorded lazily like any other,
// so the backward pass joins the step's graph instead of running at once.
//
//===----------------------------------------------------------------------===//
#include "TensorImpl.h"
#include "sinter/Error.h"

#include "Format.h"
#include "PostOrder.h"
#include "ops/Primitives.h"

#include <unordered_map>
#include <unordered_set>

namespace sinter {

void detail::attachGrad(Tensor &result, std::string_view name, const std::vector<Tensor> &inputs,
                        std::function<std::vector<Tensor>(const Tensor &)> backward, Loc loc) {
  if (!grad_enabled())
    return;
  bool any = false;
  auto fn = std::make_shared<GradFn>();
  for (const Tensor &input : inputs) {
    bool needs = input.defined() && input.impl()->requiresGrad;
    any = any || needs;
    fn->inputs.push_back(needs ? input.impl() : nullptr);
  }
  if (!any)
    return;
  fn->name = name;
  fn->loc = loc;
  fn->backward = std::move(backward);
  result.impl()->requiresGrad = true;
  result.impl()->gradFn = std::move(fn);
}

Tensor &Tensor::requires_grad_(bool enabled, Loc loc) {
  SINTER_CHECK(defined(), loc, "requires_grad_: the tensor is undefined");
  SINTER_CHECK(isFloatingPoint(dtype()), loc,
               cat("requires_grad_: only floating-point tensors can require gradients, "
                   "this one is ",
                   name(dtype())));
  SINTER_CHECK(is_leaf() || enabled, loc,
               "requires_grad_(false) on a non-leaf tensor; use detach() instead");
  impl()->requiresGrad = enabled;
  return *this;
}

bool Tensor::requires_grad() const { return defined() && impl()->requiresGrad; }
bool Tensor::is_leaf() const { return !defined() || impl()->gradFn == nullptr; }

Tensor Tensor::grad() const {
  if (!defined() || !impl()->grad)
    return Tensor();
  return Tensor(impl()->grad);
}

void Tensor::set_grad(const Tensor &grad) const {
  if (defined())
    impl()->grad = grad.impl();
}

Tensor &Tensor::copy_(const Tensor &source, Loc loc) {
  SINTER_CHECK(defined() && source.defined(), loc, "copy_: the tensor is undefined");
  SINTER_CHECK(source.shape() == shape(), loc,
               cat("copy_: source has shape ", sinter::toString(source.shape()),
                   " but the tensor has shape ", sinter::toString(shape())));
  // Autograd does not record copy_: in grad mode, refuse whatever would make
  // gradients silently wrong (PyTorch would record the copy instead).
  SINTER_CHECK(!(grad_enabled() && (requires_grad() || source.requires_grad())), loc,
               "copy_: in-place update of a tensor that requires grad (or from one) is not "
               "recorded by autograd; do it under sinter::NoGradGuard (as optimizers do)");
  Tensor value = source.dtype() == dtype() ? source : source.to(dtype(), loc);
  detail::setNode(*impl(), detail::nodeOf(value));
  return *this;
}

Tensor Tensor::detach() const {
  if (!defined())
    return Tensor();
  // Registered like every tensor: parameters are made with detach(), and
  // mark_step() must turn them into data or each step's update would keep
  // the previous step's graph alive.
  return detail::wrap(detail::nodeOf(*impl()));
}

void Tensor::backward(const Tensor &gradient, Loc loc) const { backward(gradient, false, loc); }

void Tensor::backward(const Tensor &gradient, bool retain_graph, Loc loc) const {
  SINTER_CHECK(defined(), loc, "backward: the tensor is undefined");
  SINTER_CHECK(requires_grad(), loc,
               "backward: the tensor does not require grad (no input of the ops that made it "
               "called requires_grad_())");
  Tensor seed = gradient;
  if (!seed.defined()) {
    SINTER_CHECK(numel() == 1, loc,
                 cat("backward: the tensor has shape ", sinter::toString(shape()),
                     "; pass a gradient of that shape, or call backward() on a "
                     "one-element loss"));
    seed = prim::fullLike(*this, 1.0, loc); // on this tensor's device
  }
  SINTER_CHECK(seed.shape() == shape(), loc,
               cat("backward: the gradient has shape ", sinter::toString(seed.shape()),
                   " but the tensor has shape ", sinter::toString(shape())));

  PhaseGuard phase(lazy::Phase::Backward);
  // Topological order of the tensors that lead to this one (walked backwards).
  std::vector<TensorImpl *> order =
      detail::postOrder(std::vector<TensorImpl *>{impl().get()}, [](TensorImpl *node, auto visit) {
        if (node->gradFn)
          for (const std::shared_ptr<TensorImpl> &input : node->gradFn->inputs)
            if (input)
              visit(input.get());
      });

  std::unordered_map<TensorImpl *, Tensor> grads;
  grads[impl().get()] = seed;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    TensorImpl *node = *it;
    auto found = grads.find(node);
    if (found == grads.end())
      continue;
    Tensor g = found->second;
    if (!node->gradFn) {
      // A leaf: accumulate, as PyTorch does across backward() calls.
      Tensor accumulated = node->grad ? Tensor(node->grad) + Operand(g, loc) : g.detach();
      node->grad = accumulated.impl();
      continue;
    }
    const GradFn &fn = *node->gradFn;
    if (fn.freedAt)
      throwError(cat("backward: the graph through ", fn.name, " (recorded at ", fn.loc.file_name(),
                     ":", fn.loc.line(), ") was freed by the backward() at ",
                     fn.freedAt->file_name(), ":", fn.freedAt->line(),
                     "; pass retain_graph = true to that backward() to go through it twice"),
                 loc);
    std::vector<Tensor> inputGrads;
    {
      NoGradGuard noHigherOrder; // gradients of gradients are not recorded
      inputGrads = fn.backward(g);
    }
    for (size_t i = 0; i < fn.inputs.size(); ++i) {
      if (!fn.inputs[i] || i >= inputGrads.size() || !inputGrads[i].defined())
        continue;
      TensorImpl *input = fn.inputs[i].get();
      // A mismatch here is a bug in a gradient formula, not a user error.
      SINTER_CHECK(inputGrads[i].shape() == input->shape, fn.loc,
                   cat("internal error: the gradient of ", fn.name, " for input #", i,
                       " has shape ", sinter::toString(inputGrads[i].shape()),
                       " but the input has shape ", sinter::toString(input->shape)));
      auto [slot, inserted] = grads.try_emplace(input, inputGrads[i]);
      // A tensor used several times sums its gradients, blamed on the
      // user's line of the use that adds the next one.
      if (!inserted)
        slot->second = slot->second + Operand(inputGrads[i], fn.loc);
    }
    grads.erase(found);
  }
  if (retain_graph)
    return;
  // Free the graph: its saved tensors and intermediate results are released
  // (the functions are held here first: releasing one's inputs may free the
  // tensors that hold the others).
  std::vector<std::shared_ptr<GradFn>> functions;
  for (TensorImpl *node : order)
    if (node->gradFn && !node->gradFn->freedAt)
      functions.push_back(node->gradFn);
  for (const std::shared_ptr<GradFn> &fn : functions) {
    fn->backward = nullptr;
    fn->inputs.clear();
    fn->freedAt = loc;
  }
}

} // namespace sinter
