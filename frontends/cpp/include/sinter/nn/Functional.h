//===- Functional.h - sinter::nn::functional ------------------------------===//
//
// PyTorch's torch.nn.functional, recorded lazily. Composite functions are
// recorded as primitive ops (the compiler fuses them back), so their
// gradients follow from the primitives'.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_NN_FUNCTIONAL_H
#define SINTER_NN_FUNCTIONAL_H

#include "sinter/Tensor.h"

#include <string_view>

namespace sinter::nn::functional {

/// x @ weight^T + bias; weight is [out, in], bias [out] or undefined.
Tensor linear(const Tensor &x, const Tensor &weight, const Tensor &bias = Tensor(),
              Loc loc = Loc::current());
Tensor relu(const Tensor &x, Loc loc = Loc::current());
/// approximate = "none" (erf form) or "tanh".
Tensor gelu(const Tensor &x, std::string_view approximate = "none", Loc loc = Loc::current());
Tensor softmax(const Tensor &x, int64_t dim, Loc loc = Loc::current());
Tensor log_softmax(const Tensor &x, int64_t dim, Loc loc = Loc::current());
/// Normalises over the last normalized_shape.size() dims; weight and bias
/// (that shape) are optional.
Tensor layer_norm(const Tensor &x, const Shape &normalized_shape, const Tensor &weight = Tensor(),
                  const Tensor &bias = Tensor(), double eps = 1e-5, Loc loc = Loc::current());
/// Zeroes elements with probability p (Philox, from the global generator)
/// and scales the rest by 1 / (1 - p); the identity when !training.
Tensor dropout(const Tensor &x, double p = 0.5, bool training = true, Loc loc = Loc::current());
/// Rows of weight ([num_embeddings, dim]) at integer `indices`: shape
/// indices.shape + [dim].
Tensor embedding(const Tensor &indices, const Tensor &weight, Loc loc = Loc::current());

enum class Reduction { mean, sum, none };

/// Cross entropy of logits [N, C] with class indices [N] (integers);
/// targets equal to ignore_index count for nothing (and not in the mean).
Tensor cross_entropy(const Tensor &logits, const Tensor &targets, int64_t ignore_index = -100,
                     Reduction reduction = Reduction::mean, Loc loc = Loc::current());
Tensor mse_loss(const Tensor &input, const Tensor &target, Reduction reduction = Reduction::mean,
                Loc loc = Loc::current());
/// 2-D convolution of input [N, C, H, W] with weight [O, C / groups, KH, KW]
/// and optional bias [O]; stride, padding (symmetric, zeros) and dilation
/// are [h, w].
Tensor conv2d(const Tensor &input, const Tensor &weight, const Tensor &bias = Tensor(),
              std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0},
              std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1, Loc loc = Loc::current());
/// Max pooling over [N, C, H, W]; stride defaults to the kernel size.
Tensor max_pool2d(const Tensor &input, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> stride = {}, std::vector<int64_t> padding = {0, 0},
                  Loc loc = Loc::current());
/// Average pooling (padding counted in the average, as PyTorch's default).
Tensor avg_pool2d(const Tensor &input, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> stride = {}, std::vector<int64_t> padding = {0, 0},
                  Loc loc = Loc::current());
/// Batch normalisation over [N, C, ...] per channel. In training, uses the
/// batch's statistics and updates running_mean / running_var in place
/// (unbiased variance, as PyTorch); otherwise uses the running statistics.
Tensor batch_norm(const Tensor &input, const Tensor &running_mean, const Tensor &running_var,
                  const Tensor &weight = Tensor(), const Tensor &bias = Tensor(),
                  bool training = false, double momentum = 0.1, double eps = 1e-5,
                  Loc loc = Loc::current());

/// softmax(q k^T / sqrt(d) + mask) v over the last two dims of [..., L, d]
/// tensors; with is_causal, position i attends to positions <= i.
Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key, const Tensor &value,
                                    bool is_causal = false, Loc loc = Loc::current());

} // namespace sinter::nn::functional

#endif // SINTER_NN_FUNCTIONAL_H
