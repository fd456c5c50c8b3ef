//===- Tensor.h - lazy tensors --------------------------------------------===//
//
// A sinter::Tensor is a handle to a node of a lazy graph: every op records a
// node (op, attributes, operands, shape, dtype, device and the caller's source
// line) and returns at once. Values are computed when one is needed
// (to_vector, item, printing: on the reference executor, plain C++ loops) or
// at sinter::mark_step() (compiled when the compiler is enabled, see
// sinter/Compiler.h).
//
// Every op takes a trailing std::source_location defaulted to the caller's
// line; operators capture it through their right operand (see Operand). A
// wrong shape or dtype throws sinter::Error naming the op, the shapes and that
// line.
//
// Threads. The lazy graph is one per process (as in PyTorch/XLA): mark_step()
// computes every pending tensor, whichever thread recorded it.
// - Any number of threads may at once make tensors, record ops, read shapes
//   and values, call mark_step()/plan_step() and backward(), each on its own
//   tensors or on tensors the others only read (parameters in a forward
//   pass, a batch). A step holds the graph while it runs: an op another
//   thread records meanwhile waits for it, then reads the computed data.
// - What a tensor holds beside its value is its owner's: requires_grad_(),
//   copy_(), set_grad(), an optimizer's step() and zero_grad(), and
//   backward() into the same leaves (it accumulates their gradients): one
//   thread at a time per tensor, as PyTorch's in-place ops.
// - The current Session, grad mode (NoGradGuard) and the phase are per
//   thread; metrics(), the random generator and the compiler's caches may be
//   shared. A DataLoader (its prefetch thread is its own) and a
//   runtime::StepSession are used by one thread at a time; several run side
//   by side.
// (Tests: tests/unit/frontend/ThreadsTest.cpp, under ThreadSanitizer in CI.)
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TENSOR_H
#define SINTER_TENSOR_H

#include "sinter/DType.h"
#include "sinter/Device.h"
#include "sinter/Shape.h"

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace sinter {

namespace lazy {
enum class Phase : uint8_t; // sinter/lazy/Node.h
} // namespace lazy

struct TensorImpl;
using Loc = std::source_location;

/// A lazily evaluated n-dimensional array.
class Tensor {
public:
  /// An undefined tensor (as PyTorch's default-constructed at::Tensor).
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape &shape() const;
  int64_t dim() const;
  /// Size of dimension `d` (negative counts from the end).
  int64_t size(int64_t d, Loc loc = Loc::current()) const;
  int64_t numel() const;
  DType dtype() const;
  Device device() const;

  /// The elements in row-major order, converted to T. Runs what is pending.
  template <typename T> std::vector<T> to_vector(Loc loc = Loc::current()) const;
  /// The only element of a one-element tensor, converted to T.
  template <typename T> T item(Loc loc = Loc::current()) const;

  Tensor to(DType dtype, Loc loc = Loc::current()) const;
  Tensor to(Device device, Loc loc = Loc::current()) const;

  // Autograd.
  /// Marks this (leaf) tensor as needing a gradient; returns *this.
  Tensor &requires_grad_(bool enabled = true, Loc loc = Loc::current());
  bool requires_grad() const;
  /// Accumulates d(this)/d(leaf) into every leaf's grad(). REQUIRES: a
  /// one-element tensor (the loss), or pass `gradient` of this shape.
  /// As in PyTorch, the graph behind this tensor is freed afterwards (the
  /// tensors its gradient functions saved are released, so that mark_step()
  /// does not compute them as results); a second backward() through it is
  /// an error unless the first one passed `retain_graph`.
  void backward(const Tensor &gradient = Tensor(), Loc loc = Loc::current()) const;
  void backward(const Tensor &gradient, bool retain_graph, Loc loc = Loc::current()) const;
  /// The accumulated gradient of a leaf (undefined before any backward()).
  Tensor grad() const;
  /// Sets or clears (with an undefined tensor) the accumulated gradient.
  void set_grad(const Tensor &grad) const;
  /// The same values, cut from the autograd graph.
  Tensor detach() const;
  /// Whether this tensor was made by the user rather than by an op that
  /// records a gradient function.
  bool is_leaf() const;

  // Shape ops.
  Tensor reshape(const Shape &shape, Loc loc = Loc::current()) const;
  Tensor view(const Shape &shape, Loc loc = Loc::current()) const;
  Tensor transpose(int64_t dim0, int64_t dim1, Loc loc = Loc::current()) const;
  Tensor permute(const std::vector<int64_t> &dims, Loc loc = Loc::current()) const;
  /// Transpose of a matrix (rank <= 2).
  Tensor t(Loc loc = Loc::current()) const;
  Tensor unsqueeze(int64_t dim, Loc loc = Loc::current()) const;
  Tensor squeeze(std::optional<int64_t> dim = std::nullopt, Loc loc = Loc::current()) const;
  Tensor expand(const Shape &shape, Loc loc = Loc::current()) const;
  /// Elements start, start + step, ... below end along `dim` (torch's x[..., a:b:s]).
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1,
               Loc loc = Loc::current()) const;

  // Reductions (dims empty = all dimensions).
  Tensor sum(const std::vector<int64_t> &dims = {}, bool keepdim = false,
             Loc loc = Loc::current()) const;
  Tensor mean(const std::vector<int64_t> &dims = {}, bool keepdim = false,
              Loc loc = Loc::current()) const;
  Tensor amax(const std::vector<int64_t> &dims = {}, bool keepdim = false,
              Loc loc = Loc::current()) const;
  Tensor argmax(int64_t dim, bool keepdim = false, Loc loc = Loc::current()) const;

  // Elementwise.
  Tensor exp(Loc loc = Loc::current()) const;
  Tensor log(Loc loc = Loc::current()) const;
  Tensor tanh(Loc loc = Loc::current()) const;
  Tensor sqrt(Loc loc = Loc::current()) const;
  Tensor rsqrt(Loc loc = Loc::current()) const;
  Tensor abs(Loc loc = Loc::current()) const;
  Tensor relu(Loc loc = Loc::current()) const;
  Tensor sigmoid(Loc loc = Loc::current()) const;
  Tensor sin(Loc loc = Loc::current()) const;
  Tensor cos(Loc loc = Loc::current()) const;
  Tensor logical_not(Loc loc = Loc::current()) const;
  Tensor pow(double exponent, Loc loc = Loc::current()) const;
  Tensor pow(const Tensor &exponent, Loc loc = Loc::current()) const;
  Tensor matmul(const Tensor &other, Loc loc = Loc::current()) const;
  Tensor masked_fill(const Tensor &mask, double value, Loc loc = Loc::current()) const;

  /// Makes this tensor hold `source`'s values (converted to this dtype), in
  /// place: every handle to this tensor sees them (but not a detach()ed copy,
  /// which is a new tensor of the same value, unlike PyTorch's shared storage).
  /// Only values move: autograd does not record the copy, and this tensor keeps
  /// its requires_grad and grad. REQUIRES: same shape; grad mode off when
  /// either tensor requires grad (as for PyTorch's update of a parameter).
  Tensor &copy_(const Tensor &source, Loc loc = Loc::current());

  /// Human-readable: shape, dtype and (running what is pending) the values.
  std::string toString() const;

  const std::shared_ptr<TensorImpl> &impl() const { return impl_; }

private:
  std::shared_ptr<TensorImpl> impl_;
};

/// A tensor or a number on the right of an operator, with the source line of
/// the expression: operators cannot take a defaulted location parameter, but
/// the implicit conversion to Operand can, at the caller's line.
struct Operand {
  Operand(const Tensor &tensor, Loc loc = Loc::current()) : tensor(tensor), loc(loc) {}
  template <typename T>
  requires std::is_arithmetic_v<T> Operand(T value, Loc loc = Loc::current())
      : scalar(static_cast<double>(value)), floating(std::is_floating_point_v<T>), loc(loc) {}

  Tensor tensor;
  std::optional<double> scalar;
  /// The number was written as a floating-point value (2.0, not 2): an
  /// integer tensor then promotes to f32, as in PyTorch.
  bool floating = false;
  Loc loc;
};

/// A number on the left of an operator (`2 * x`), with the expression's line.
struct Scalar {
  template <typename T>
  requires std::is_arithmetic_v<T> Scalar(T value, Loc loc = Loc::current())
      : value(static_cast<double>(value)), floating(std::is_floating_point_v<T>), loc(loc) {}

  double value;
  bool floating = false;
  Loc loc;
};

// Arithmetic with PyTorch's broadcasting and type promotion.
Tensor operator+(const Tensor &a, const Operand &b);
Tensor operator-(const Tensor &a, const Operand &b);
Tensor operator*(const Tensor &a, const Operand &b);
Tensor operator/(const Tensor &a, const Operand &b);
Tensor operator+(Scalar a, const Tensor &b);
Tensor operator-(Scalar a, const Tensor &b);
Tensor operator*(Scalar a, const Tensor &b);
Tensor operator/(Scalar a, const Tensor &b);
Tensor operator-(const Tensor &a);
// Comparisons give boolean tensors.
Tensor operator==(const Tensor &a, const Operand &b);
Tensor operator!=(const Tensor &a, const Operand &b);
Tensor operator<(const Tensor &a, const Operand &b);
Tensor operator<=(const Tensor &a, const Operand &b);
Tensor operator>(const Tensor &a, const Operand &b);
Tensor operator>=(const Tensor &a, const Operand &b);
// Bitwise on integers, logical on bools (PyTorch's &, |, ^, ~); both
// operands bool or integer, promoted as arithmetic is.
Tensor operator&(const Tensor &a, const Operand &b);
Tensor operator|(const Tensor &a, const Operand &b);
Tensor operator^(const Tensor &a, const Operand &b);
Tensor operator~(const Tensor &x);

// Creation. `shape` is the result's shape; f32 unless given, on the current
// session's device (Note [Sessions] in sinter/Session.h).
Tensor zeros(const Shape &shape, DType dtype = DType::f32, Loc loc = Loc::current());
Tensor ones(const Shape &shape, DType dtype = DType::f32, Loc loc = Loc::current());
Tensor full(const Shape &shape, double value, DType dtype = DType::f32, Loc loc = Loc::current());
/// 0, 1, ..., end - 1 (i64), or start, start + step, ... below end.
Tensor arange(int64_t end, DType dtype = DType::i64, Loc loc = Loc::current());
Tensor arange(int64_t start, int64_t end, int64_t step = 1, DType dtype = DType::i64,
              Loc loc = Loc::current());
/// Standard normal / uniform [0, 1) numbers from the global generator (see
/// manual_seed).
Tensor randn(const Shape &shape, DType dtype = DType::f32, Loc loc = Loc::current());
Tensor rand(const Shape &shape, DType dtype = DType::f32, Loc loc = Loc::current());
/// A tensor holding `values` (row-major) with the given shape; the dtype
/// follows T (float -> f32, double -> f32, int32_t -> i32, int64_t -> i64,
/// bool -> bool) unless given.
template <typename T>
Tensor from_vector(const std::vector<T> &values, const Shape &shape,
                   std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
/// Seeds the global random generator (Philox, counter-based).
void manual_seed(uint64_t seed);

/// The global generator's whole state: its seed and how many random tensors
/// it has drawn since (each draw is its own Philox stream). Restoring it, as
/// torch.set_rng_state, makes the next draws repeat: checkpoints keep it.
struct RngState {
  uint64_t seed = 0;
  uint64_t stream = 0;
};
RngState get_rng_state();
void set_rng_state(const RngState &state);

// Free-function forms of the ops.
Tensor matmul(const Tensor &a, const Tensor &b, Loc loc = Loc::current());
Tensor exp(const Tensor &x, Loc loc = Loc::current());
Tensor log(const Tensor &x, Loc loc = Loc::current());
Tensor tanh(const Tensor &x, Loc loc = Loc::current());
Tensor sqrt(const Tensor &x, Loc loc = Loc::current());
Tensor rsqrt(const Tensor &x, Loc loc = Loc::current());
Tensor abs(const Tensor &x, Loc loc = Loc::current());
Tensor relu(const Tensor &x, Loc loc = Loc::current());
Tensor sigmoid(const Tensor &x, Loc loc = Loc::current());
Tensor erf(const Tensor &x, Loc loc = Loc::current());
Tensor sin(const Tensor &x, Loc loc = Loc::current());
Tensor cos(const Tensor &x, Loc loc = Loc::current());
/// Bool tensors of the operands' truth (nonzero is true), broadcast, as
/// PyTorch's logical_* functions.
Tensor logical_not(const Tensor &x, Loc loc = Loc::current());
Tensor logical_and(const Tensor &a, const Tensor &b, Loc loc = Loc::current());
Tensor logical_or(const Tensor &a, const Tensor &b, Loc loc = Loc::current());
Tensor logical_xor(const Tensor &a, const Tensor &b, Loc loc = Loc::current());
/// The operator forms' functions: bool or integer tensors (or a number for
/// the second), promoted and broadcast.
Tensor bitwise_and(const Tensor &a, const Operand &b);
Tensor bitwise_or(const Tensor &a, const Operand &b);
Tensor bitwise_xor(const Tensor &a, const Operand &b);
Tensor bitwise_not(const Tensor &x, Loc loc = Loc::current());
Tensor pow(const Tensor &x, double exponent, Loc loc = Loc::current());
Tensor pow(const Tensor &x, const Tensor &exponent, Loc loc = Loc::current());
Tensor maximum(const Tensor &a, const Tensor &b, Loc loc = Loc::current());
Tensor minimum(const Tensor &a, const Tensor &b, Loc loc = Loc::current());
/// Elementwise `condition ? a : b`, broadcasting all three.
Tensor where(const Tensor &condition, const Tensor &a, const Tensor &b, Loc loc = Loc::current());
Tensor masked_fill(const Tensor &x, const Tensor &mask, double value, Loc loc = Loc::current());
Tensor cat(const std::vector<Tensor> &tensors, int64_t dim = 0, Loc loc = Loc::current());
/// The slices of x at `index` (integer, any shape) along dim, as
/// torch.index_select generalised to any index shape: the result's shape is
/// x.shape[:dim] + index.shape + x.shape[dim+1:].
Tensor index_select(const Tensor &x, int64_t dim, const Tensor &index, Loc loc = Loc::current());
Tensor stack(const std::vector<Tensor> &tensors, int64_t dim = 0, Loc loc = Loc::current());
Tensor sum(const Tensor &x, const std::vector<int64_t> &dims = {}, bool keepdim = false,
           Loc loc = Loc::current());
Tensor mean(const Tensor &x, const std::vector<int64_t> &dims = {}, bool keepdim = false,
            Loc loc = Loc::current());
Tensor amax(const Tensor &x, const std::vector<int64_t> &dims = {}, bool keepdim = false,
            Loc loc = Loc::current());
Tensor argmax(const Tensor &x, int64_t dim, bool keepdim = false, Loc loc = Loc::current());
Tensor transpose(const Tensor &x, int64_t dim0, int64_t dim1, Loc loc = Loc::current());
Tensor permute(const Tensor &x, const std::vector<int64_t> &dims, Loc loc = Loc::current());
Tensor reshape(const Tensor &x, const Shape &shape, Loc loc = Loc::current());

/// Computes every pending tensor that is still referenced and cuts the graph
/// behind it: the end of one training step, with the current session's
/// settings (Note [Sessions] in sinter/Session.h; Session::mark_step with
/// another's). The call site identifies the step in metrics and
/// recompilation reports (sinter/Metrics.h).
void mark_step(Loc loc = Loc::current());

struct StepMemory;
struct PlanOptions {
  /// Build the step's kernels too, so the next mark_step() runs at once;
  /// false only lowers, fuses and plans (fast: for trying batch sizes).
  bool build_kernels = true;
};
/// The memory the next mark_step() will take to run the pending step compiled
/// under the current session's settings (Note [Step memory] in
/// sinter/Metrics.h), from its compiled program and memory plan, without
/// running it. Throws sinter::Error naming `loc` when
/// the step cannot be compiled.
StepMemory plan_step(PlanOptions options = {}, Loc loc = Loc::current());

/// While alive, ops record no gradient functions (as torch::NoGradGuard).
class NoGradGuard {
public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard &) = delete;
  NoGradGuard &operator=(const NoGradGuard &) = delete;

private:
  bool previous_;
};

/// Marks the ops recorded in its scope as part of the backward pass or of an
/// optimizer's update (Tensor::backward and the optimizers' step() do; a
/// hand-written optimizer may), so that memory reports can tell gradients,
/// activations kept for the backward pass and optimizer state apart.
class PhaseGuard {
public:
  explicit PhaseGuard(lazy::Phase phase);
  ~PhaseGuard();
  PhaseGuard(const PhaseGuard &) = delete;
  PhaseGuard &operator=(const PhaseGuard &) = delete;

private:
  lazy::Phase previous_;
};

/// Whether ops currently record gradient functions.
bool grad_enabled();

} // namespace sinter

#endif // SINTER_TENSOR_H
