//===- Module.cpp - sinter::nn::Module ------------------------------------===//
#include "sinter/nn/Module.h"

#include "../Format.h"
#include "sinter/Error.h"

namespace sinter::nn {

Tensor Module::forward(const Tensor &, Loc loc) {
  throwError(cat(type(), " has no single-input forward(); call its own forward overload"), loc);
}

Tensor Module::register_parameter(std::string name, Tensor value) {
  if (value.defined() && !value.requires_grad())
    value.requires_grad_();
  parameters_.emplace_back(std::move(name), value);
  return value;
}

Tensor Module::register_buffer(std::string name, Tensor value) {
  buffers_.emplace_back(std::move(name), value);
  return value;
}

void Module::collect(const std::string &prefix, bool buffers,
                     std::vector<std::pair<std::string, Tensor>> &out) const {
  for (const auto &[name, tensor] : buffers ? buffers_ : parameters_)
    if (tensor.defined())
      out.emplace_back(prefix + name, tensor);
  for (const auto &[name, child] : children_)
    child->collect(prefix + name + ".", buffers, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, out);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto &[name, tensor] : named_parameters())
    out.push_back(tensor);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto &[name, child] : children_)
    child->train(on);
}

void Module::to(Device device, Loc loc) {
  // Tensors are moved in place, so every handle (optimizers too) follows.
  NoGradGuard noGrad;
  for (auto &[name, tensor] : named_parameters())
    if (tensor.device() != device)
      tensor.copy_(tensor.to(device, loc), loc);
  for (auto &[name, tensor] : named_buffers())
    if (tensor.device() != device)
      tensor.copy_(tensor.to(device, loc), loc);
}

void Module::zero_grad() {
  for (Tensor &p : parameters())
    p.set_grad(Tensor());
}

} // namespace sinter::nn
