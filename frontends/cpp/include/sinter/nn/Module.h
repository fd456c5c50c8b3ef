//===- Module.h - sinter::nn::Module, the base of every layer and model ---===//
#ifndef SINTER_NN_MODULE_H
#define SINTER_NN_MODULE_H

#include "sinter/Tensor.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sinter::nn {

/// A layer or model: parameters, buffers and child modules, registered by
/// name in order, and a forward pass. As in PyTorch, parameters are shared
/// handles: an optimizer that updates them in place updates the module.
///
/// forward() takes the caller's source location, and a module passes it to
/// everything it records, so an error inside a model names the user's line.
class Module {
public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// The forward pass of a module with one tensor input. Modules with other
  /// signatures (e.g. MultiheadAttention) define their own and throw here.
  virtual Tensor forward(const Tensor &x, Loc loc = Loc::current());
  Tensor operator()(const Tensor &x, Loc loc = Loc::current()) { return forward(x, loc); }

  /// The module's type, e.g. "Linear".
  virtual std::string type() const = 0;

  /// Every parameter of this module and its children, in registration order.
  std::vector<Tensor> parameters() const;
  /// The same, with dotted names ("layers.0.weight").
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  /// The direct children, by name.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>> &children() const {
    return children_;
  }

  /// Training mode (dropout active, batch norm uses batch statistics).
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  /// Moves parameters and buffers to `device`.
  void to(Device device, Loc loc = Loc::current());
  /// Clears the gradients of every parameter.
  void zero_grad();

protected:
  /// Registers a parameter (made to require grad) and returns its handle.
  Tensor register_parameter(std::string name, Tensor value);
  /// Registers a buffer: state saved with the module but not trained.
  Tensor register_buffer(std::string name, Tensor value);
  template <typename M> std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> m) {
    children_.emplace_back(std::move(name), m);
    return m;
  }

private:
  void collect(const std::string &prefix, bool buffers,
               std::vector<std::pair<std::string, Tensor>> &out) const;

  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

} // namespace sinter::nn

#endif // SINTER_NN_MODULE_H
