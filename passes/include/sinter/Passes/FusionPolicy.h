//===- FusionPolicy.h - what may be fused, and why not ----------*- C++ -*-===//
//
// Fusion legality, kept apart from the fusion driver (Fusion.cpp): small pure
// functions that return a decision, with a reason when the answer is no. The
// reasons are what `sinter-opt --sinter-fusion=explain=1` and the debug dumps
// print, so they are written for a human.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_FUSIONPOLICY_H
#define SINTER_PASSES_FUSIONPOLICY_H

#include "mlir/IR/Operation.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace sinter::fusion {

/// Concatenates anything a raw_ostream prints (std::string's operator+ chains
/// trip a GCC 12 false positive, -Wrestrict).
template <typename... Args> std::string text(const Args &...args) {
  std::string out;
  llvm::raw_string_ostream os(out);
  (os << ... << args);
  return os.str();
}

/// A yes, or a no with the reason.
class FusionDecision {
public:
  static FusionDecision allow() { return FusionDecision(std::nullopt); }
  static FusionDecision forbid(std::string reason) { return FusionDecision(std::move(reason)); }
  bool allowed() const { return !reason_; }
  explicit operator bool() const { return allowed(); }
  /// Why not (empty when allowed).
  const std::string &reason() const {
    static const std::string none;
    return reason_ ? *reason_ : none;
  }

private:
  explicit FusionDecision(std::optional<std::string> reason) : reason_(std::move(reason)) {}
  std::optional<std::string> reason_;
};

/// How an op takes part in fusion.
enum class Role {
  Elementwise, // one output element from the same element of each operand
  Layout,      // a different index map (broadcast, reshape, transpose, slice)
  Reduction,   // a row reduction: the trailing dims of its operand collapse
  Constant,    // a splat constant: cloned into every fusion that uses it
  Library,     // a call (matmul, convolution, ...): never fused
};

/// The op's role, and for Library ops why they are not fused.
Role roleOf(mlir::Operation *op);

/// Note [Fusion asks the target]
/// Which ops a kernel can compute is the op's structure (its Role: what the
/// kernel plans and renderers know how to write); which of those the
/// backend runs as library calls instead is the target's to say
/// (`codegen::Target::isLibraryCall`, handed over by
/// `codegen::fusionRules`, as XLA's passes take a device description): an
/// op is fused only where both allow it. Without a target (`sinter-opt`),
/// the structure alone decides. Plain C++ (an op is only a pointer here):
/// the target (compiler/) fills it in, the passes read it, as MemoryRules.
struct FusionRules {
  /// Whether the target runs `op` as a library call; empty: none.
  std::function<bool(mlir::Operation *op)> isLibraryCall;
  /// The target's name, for the reason ("cpu", "cuda").
  std::string target;
};

/// Whether `op` may be in a fusion at all (a Library op may not: the reason
/// names the library or the missing support; nor may an op `rules`' target
/// runs as a library call).
FusionDecision canFuse(mlir::Operation *op, const FusionRules &rules = {});

/// A fusion's iteration domain: `rows` rows of `cols` elements. Every value
/// computed in a fusion covers either the whole domain (rows * cols
/// elements) or one value per row (rows elements, after a row reduction).
struct Domain {
  int64_t rows = 0;
  int64_t cols = 0;
};

/// The domain `op` imposes, if it is a reduction (its operand's leading dims
/// are the rows, the reduced trailing dims the columns), or nullopt.
/// Reductions over dimensions that are not trailing are refused with a reason.
FusionDecision reductionDomain(mlir::Operation *op, std::optional<Domain> &domain);

/// Whether `op`'s result fits `domain` (covers it, or one value per row).
FusionDecision fitsDomain(mlir::Operation *op, const Domain &domain);

/// Note [Recompute, do not store]
/// A value computed in one fusion and read by later fusions (GELU's and layer
/// norm's intermediates, kept for the backward pass) is stored by the first
/// kernel and loaded by the others. When the value is a short elementwise
/// function of values that are in memory anyway, the readers compute it
/// again instead, as torch.compile's partitioner recomputes pointwise ops in
/// the backward: memory traffic, not arithmetic, bounds these kernels, and
/// the value is never stored. `canRecompute` decides from the value's
/// recipe inside its fusion (`cone`: the ops that compute it from the fusion's
/// inputs, row reductions and the values the fusion stores anyway) and the
/// values it would read (`reads`). A stored broadcast is read as its small
/// operand, the size it is stored at once canonicalized. A layer norm's
/// normalized input is then computed again from the centered input and the
/// row's 1/sigma, both kept for its backward pass: one tensor of the layer's
/// size less a norm (gpt-mini's step 88.1 -> 79.1 MiB, bert-mini's 72.1 ->
/// 64.0). A stored value is read only when no larger than the value (a
/// broadcast at its small operand's size), so reading it longer never adds
/// memory: its extra lifetime lies within that of the value no longer
/// stored. When reading stored values would make a recipe read two
/// tensors, the recipe computes them again as before.
inline constexpr int64_t kMaxRecomputedOps = 16;
FusionDecision canRecompute(mlir::Value value, llvm::ArrayRef<mlir::Operation *> cone,
                            llvm::ArrayRef<mlir::Value> reads);

/// Note [Scalars are copied, not shared]
/// CSE leaves one broadcast of the learning rate, and one chain of scalar
/// bias corrections, for all the AdamW updates of a step. The driver merges a
/// producer into its consumer's group, so every later reader of such a shared
/// value joined the first reader's group: the updates of all parameters of a
/// shape became one kernel, which can run only once all their gradients
/// exist, so those gradients were all live at once (resnet18's three
/// 9 MiB filter gradients of its last stage). A value of one element, and a
/// broadcast or reshape of one, costs nothing to compute again, so before
/// grouping each fusible reader gets its own copy of it: kernels are then as
/// independent as the computation, and the scheduler can update each
/// parameter as soon as its gradient is complete. Only readers of at least
/// `kCopiedForElements` elements get copies: small updates (biases, norms'
/// weights) gain nothing from their own kernels and still share one. A
/// reader gets one copy of every scalar op it reaches through scalar ops
/// (the whole chain of bias corrections), however many paths lead to it, so
/// the copies grow with readers times chain length, never with paths.
/// `isCopiedScalar` says whether `op` is such a value (random numbers never
/// are: a copy is a second draw in the program's text); `takesScalarCopies`
/// whether `reader` gets its own.
inline constexpr int64_t kCopiedForElements = 1 << 16;
bool isCopiedScalar(mlir::Operation *op);
bool takesScalarCopies(mlir::Operation *reader, const FusionRules &rules = {});

} // namespace sinter::fusion

#endif // SINTER_PASSES_FUSIONPOLICY_H
