//===- Functional.cpp - sinter::nn::functional ----------------------------===//
#include "sinter/nn/Functional.h"

#include "../Format.h"
#include "../TensorImpl.h"
#include "../ops/Primitives.h"
#include "sinter/Error.h"

#include <cmath>
#include <numbers>

namespace sinter::nn::functional {
namespace {

void checkFloat(const Tensor &x, std::string_view op, Loc loc) {
  SINTER_CHECK(x.defined(), loc, cat(op, ": the tensor is undefined"));
  SINTER_CHECK(isFloatingPoint(x.dtype()), loc,
               cat(op, ": expects a floating-point tensor, got ", name(x.dtype()), " of shape ",
                   toString(x.shape())));
}

Tensor reduce(const Tensor &losses, Reduction reduction, Loc loc) {
  switch (reduction) {
  case Reduction::mean:
    return losses.mean({}, false, loc);
  case Reduction::sum:
    return losses.sum({}, false, loc);
  case Reduction::none:
    return losses;
  }
  return losses;
}

} // namespace

Tensor linear(const Tensor &x, const Tensor &weight, const Tensor &bias, Loc loc) {
  checkFloat(x, "linear", loc);
  checkFloat(weight, "linear", loc);
  SINTER_CHECK(
      weight.dim() == 2, loc,
      cat("linear: weight must be [out_features, in_features], got ", toString(weight.shape())));
  SINTER_CHECK(x.dim() >= 1 && x.shape().back() == weight.shape()[1], loc,
               cat("linear: input ", toString(x.shape()), " has ",
                   x.dim() >= 1 ? x.shape().back() : 0, " features but weight ",
                   toString(weight.shape()), " expects ", weight.shape()[1]));
  Tensor y = matmul(x, weight.t(loc), loc);
  if (!bias.defined())
    return y;
  SINTER_CHECK(bias.shape() == Shape{weight.shape()[0]}, loc,
               cat("linear: bias has shape ", toString(bias.shape()), " but weight ",
                   toString(weight.shape()), " needs [", weight.shape()[0], "]"));
  return y + Operand(bias, loc);
}

Tensor relu(const Tensor &x, Loc loc) { return sinter::relu(x, loc); }

Tensor gelu(const Tensor &x, std::string_view approximate, Loc loc) {
  checkFloat(x, "gelu", loc);
  if (approximate == "tanh") {
    constexpr double kC = 0.7978845608028654; // sqrt(2 / pi)
    Tensor inner = (x + Operand(Scalar(0.044715, loc) * x.pow(3.0, loc), loc)) * Operand(kC, loc);
    return Scalar(0.5, loc) * x * Operand(Scalar(1.0, loc) + tanh(inner, loc), loc);
  }
  SINTER_CHECK(approximate == "none", loc,
               cat("gelu: approximate must be \"none\" or \"tanh\", got \"", approximate, "\""));
  return Scalar(0.5, loc) * x *
         Operand(Scalar(1.0, loc) + erf(x * Operand(1.0 / std::numbers::sqrt2, loc), loc), loc);
}

Tensor softmax(const Tensor &x, int64_t dim, Loc loc) {
  checkFloat(x, "softmax", loc);
  Tensor y;
  {
    NoGradGuard noGrad; // one gradient function for the whole softmax, below
    // Shifting by the maximum changes nothing but the range of exp.
    Tensor shifted = x - Operand(x.amax({dim}, true, loc), loc);
    Tensor e = exp(shifted, loc);
    y = e / Operand(e.sum({dim}, true, loc), loc);
  }
  // As PyTorch's: the gradient from the output alone, dx = y * g - y * sum(y * g),
  // so the backward pass keeps the probabilities, not also the scores they
  // came from (attention keeps one [B, H, T, T] tensor a layer, not two).
  detail::attachGrad(
      y, "softmax", {x},
      [yNode = detail::nodeOf(y), dim, loc](const Tensor &g) -> std::vector<Tensor> {
        Tensor y = prim::resultOf(yNode);
        Tensor yg = y * Operand(g, loc);
        return {yg - Operand(y * Operand(yg.sum({dim}, true, loc), loc), loc)};
      },
      loc);
  return y;
}

Tensor log_softmax(const Tensor &x, int64_t dim, Loc loc) {
  checkFloat(x, "log_softmax", loc);
  Tensor shifted = x - Operand(x.amax({dim}, true, loc).detach(), loc);
  return shifted - Operand(log(exp(shifted, loc).sum({dim}, true, loc), loc), loc);
}

Tensor layer_norm(const Tensor &x, const Shape &normalized_shape, const Tensor &weight,
                  const Tensor &bias, double eps, Loc loc) {
  checkFloat(x, "layer_norm", loc);
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool fits =
      k >= 1 && k <= x.dim() && Shape(x.shape().end() - k, x.shape().end()) == normalized_shape;
  SINTER_CHECK(fits, loc,
               cat("layer_norm: normalized_shape ", toString(normalized_shape),
                   " must be the trailing dims of the input ", toString(x.shape())));
  for (const Tensor *affine : {&weight, &bias})
    SINTER_CHECK(!affine->defined() || affine->shape() == normalized_shape, loc,
                 cat("layer_norm: weight and bias must have shape ", toString(normalized_shape),
                     ", got ", toString(affine->shape())));
  if (x.dtype() == DType::f16 || x.dtype() == DType::bf16) // statistics in f32, as PyTorch
    return layer_norm(x.to(DType::f32, loc), normalized_shape, weight, bias, eps, loc)
        .to(x.dtype(), loc);
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d)
    dims.push_back(d);
  Tensor centered = x - Operand(x.mean(dims, true, loc), loc);
  Tensor variance = (centered * Operand(centered, loc)).mean(dims, true, loc);
  Tensor y = centered * Operand(rsqrt(variance + Operand(eps, loc), loc), loc);
  if (weight.defined())
    y = y * Operand(weight, loc);
  if (bias.defined())
    y = y + Operand(bias, loc);
  return y;
}

Tensor dropout(const Tensor &x, double p, bool training, Loc loc) {
  checkFloat(x, "dropout", loc);
  SINTER_CHECK(p >= 0 && p <= 1, loc, cat("dropout: p must be in [0, 1], got ", p));
  if (!training || p == 0)
    return x;
  if (p == 1)
    return x * Operand(0.0, loc);
  Tensor keep = rand(x.shape(), x.dtype(), loc) >= Operand(p, loc);
  return where(keep, x * Operand(1.0 / (1.0 - p), loc), prim::fullLike(x, 0.0, loc), loc);
}

Tensor embedding(const Tensor &indices, const Tensor &weight, Loc loc) {
  SINTER_CHECK(indices.defined() && weight.defined(), loc, "embedding: the tensor is undefined");
  SINTER_CHECK(indices.dtype() == DType::i32 || indices.dtype() == DType::i64, loc,
               cat("embedding: indices must be i32 or i64, got ", name(indices.dtype())));
  SINTER_CHECK(
      weight.dim() == 2, loc,
      cat("embedding: weight must be [num_embeddings, dim], got ", toString(weight.shape())));
  return prim::gather(weight, indices, 0, loc);
}

Tensor cross_entropy(const Tensor &logits, const Tensor &targets, int64_t ignore_index,
                     Reduction reduction, Loc loc) {
  checkFloat(logits, "cross_entropy", loc);
  SINTER_CHECK(targets.defined(), loc, "cross_entropy: the targets are undefined");
  SINTER_CHECK(targets.dtype() == DType::i32 || targets.dtype() == DType::i64, loc,
               cat("cross_entropy: targets must be class indices (i32 or i64), got ",
                   name(targets.dtype())));
  SINTER_CHECK(logits.dim() == 2 && targets.dim() == 1 && targets.shape()[0] == logits.shape()[0],
               loc,
               cat("cross_entropy: expects logits [N, C] and targets [N], got ",
                   toString(logits.shape()), " and ", toString(targets.shape())));
  int64_t classes = logits.shape()[1];
  // Targets already known (data from the user) are checked now, at this line;
  // an out-of-range class would otherwise silently select nothing.
  if (std::shared_ptr<const lazy::Value> value = detail::knownValue(*targets.impl()))
    for (double t : value->elements())
      SINTER_CHECK(t == static_cast<double>(ignore_index) || (t >= 0 && t < classes), loc,
                   cat("cross_entropy: target ", static_cast<int64_t>(t), " is out of range for ",
                       classes, " classes"));
  Tensor logp = log_softmax(logits, 1, loc);
  // The class ids pass through a gather from [0, C): a target out of range
  // (and not ignore_index) fails when the graph runs, at this line, also for
  // targets computed lazily.
  Tensor valid = targets != Operand(ignore_index, loc);
  Tensor safe = where(valid, targets, prim::fullLike(targets, 0.0, loc), loc);
  Tensor checked = prim::gather(arange(classes, targets.dtype(), loc), safe, 0, loc);
  Tensor classIds = prim::iota(logits.shape(), 1, targets.dtype(), loc);
  Tensor hit = classIds == Operand(checked.unsqueeze(1, loc), loc);
  Tensor picked = where(hit, logp, prim::fullLike(logp, 0.0, loc), loc).sum({1}, false, loc);
  Tensor weight = valid.to(logits.dtype(), loc);
  Tensor losses = picked * Operand(weight, loc) * Operand(-1.0, loc);
  if (reduction == Reduction::mean)
    return losses.sum({}, false, loc) / Operand(weight.sum({}, false, loc), loc);
  return reduce(losses, reduction, loc);
}

Tensor mse_loss(const Tensor &input, const Tensor &target, Reduction reduction, Loc loc) {
  checkFloat(input, "mse_loss", loc);
  checkFloat(target, "mse_loss", loc);
  SINTER_CHECK(input.shape() == target.shape(), loc,
               cat("mse_loss: input has shape ", toString(input.shape()), " but target has ",
                   toString(target.shape())));
  Tensor diff = input - Operand(target, loc);
  return reduce(diff * Operand(diff, loc), reduction, loc);
}

Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key, const Tensor &value,
                                    bool is_causal, Loc loc) {
  for (const Tensor *t : {&query, &key, &value})
    checkFloat(*t, "scaled_dot_product_attention", loc);
  SINTER_CHECK(query.dim() >= 2 && key.dim() == query.dim() && value.dim() == query.dim() &&
                   query.shape().back() == key.shape().back() &&
                   key.shape()[key.dim() - 2] == value.shape()[value.dim() - 2],
               loc,
               cat("scaled_dot_product_attention: expects query [..., L, d], key [..., S, d] and "
                   "value [..., S, dv], got ",
                   toString(query.shape()), ", ", toString(key.shape()), " and ",
                   toString(value.shape())));
  int64_t d = query.shape().back();
  Tensor scores = matmul(query, key.transpose(-2, -1, loc), loc) *
                  Operand(1.0 / std::sqrt(static_cast<double>(d)), loc);
  if (is_causal) {
    int64_t l = query.shape()[query.dim() - 2], s = key.shape()[key.dim() - 2];
    Tensor rows = prim::iota({l, s}, 0, DType::i64, loc);
    Tensor cols = prim::iota({l, s}, 1, DType::i64, loc);
    scores = scores.masked_fill(cols > Operand(rows, loc), -INFINITY, loc);
  }
  return matmul(softmax(scores, -1, loc), value, loc);
}

} // namespace sinter::nn::functional

namespace sinter::nn::functional {
namespace {

/// Checks a [h, w] attribute and returns it.
std::vector<int64_t> pair(std::vector<int64_t> values, std::string_view what, int64_t least,
                          std::string_view op, Loc loc) {
  SINTER_CHECK(values.size() == 2 && values[0] >= least && values[1] >= least, loc,
               cat(op, ": ", what, " must be two values [h, w] >= ", least, ", got ",
                   toString(Shape(values))));
  return values;
}

void checkNCHW(const Tensor &x, std::string_view op, Loc loc) {
  checkFloat(x, op, loc);
  SINTER_CHECK(x.dim() == 4, loc,
               cat(op, ": expects an input [N, C, H, W], got ", toString(x.shape())));
}

Tensor pool(const Tensor &input, bool max, std::vector<int64_t> kernel, std::vector<int64_t> stride,
            std::vector<int64_t> padding, std::string_view op, Loc loc) {
  checkNCHW(input, op, loc);
  prim::PoolParams p;
  p.max = max;
  p.kernel = pair(std::move(kernel), "kernel_size", 1, op, loc);
  p.stride = stride.empty() ? p.kernel : pair(std::move(stride), "stride", 1, op, loc);
  p.padding = pair(std::move(padding), "padding", 0, op, loc);
  SINTER_CHECK(input.shape()[2] > 0 && input.shape()[3] > 0, loc,
               cat(op, ": the input ", toString(input.shape()), " has no pixels"));
  for (int d = 0; d < 2; ++d) {
    SINTER_CHECK(2 * p.padding[d] <= p.kernel[d], loc,
                 cat(op, ": padding ", toString(Shape(p.padding)),
                     " must be at most half of kernel_size ", toString(Shape(p.kernel))));
    SINTER_CHECK(input.shape()[2 + d] + 2 * p.padding[d] >= p.kernel[d], loc,
                 cat(op, ": kernel_size ", toString(Shape(p.kernel)),
                     " is larger than the padded input ", toString(input.shape())));
  }
  return prim::pool2d(input, p, loc);
}

} // namespace

Tensor conv2d(const Tensor &input, const Tensor &weight, const Tensor &bias,
              std::vector<int64_t> stride, std::vector<int64_t> padding,
              std::vector<int64_t> dilation, int64_t groups, Loc loc) {
  checkNCHW(input, "conv2d", loc);
  checkFloat(weight, "conv2d", loc);
  SINTER_CHECK(
      weight.dim() == 4, loc,
      cat("conv2d: weight must be [out, in / groups, kh, kw], got ", toString(weight.shape())));
  prim::ConvParams p{pair(std::move(stride), "stride", 1, "conv2d", loc),
                     pair(std::move(padding), "padding", 0, "conv2d", loc),
                     pair(std::move(dilation), "dilation", 1, "conv2d", loc), groups};
  int64_t channels = input.shape()[1], out = weight.shape()[0];
  SINTER_CHECK(groups >= 1 && channels % groups == 0 && out % groups == 0, loc,
               cat("conv2d: groups = ", groups, " must divide both the ", channels,
                   " input channels and the ", out, " output channels"));
  SINTER_CHECK(weight.shape()[1] * groups == channels, loc,
               cat("conv2d: input ", toString(input.shape()), " has ", channels,
                   " channels but weight ", toString(weight.shape()), " expects ",
                   weight.shape()[1] * groups));
  for (int d = 0; d < 2; ++d) {
    int64_t span = p.dilation[d] * (weight.shape()[2 + d] - 1) + 1;
    SINTER_CHECK(span <= input.shape()[2 + d] + 2 * p.padding[d], loc,
                 cat("conv2d: the kernel ", toString(weight.shape()),
                     " is larger than the padded input ", toString(input.shape())));
  }
  Tensor x = input, w = weight;
  if (w.dtype() != x.dtype())
    w = w.to(x.dtype(), loc);
  Tensor y = prim::conv2d(x, w, p, loc);
  if (!bias.defined())
    return y;
  SINTER_CHECK(bias.shape() == Shape{out}, loc,
               cat("conv2d: bias has shape ", toString(bias.shape()), " but needs [", out, "]"));
  return y + Operand(bias.reshape({out, 1, 1}, loc), loc);
}

Tensor max_pool2d(const Tensor &input, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> stride, std::vector<int64_t> padding, Loc loc) {
  return pool(input, true, std::move(kernel_size), std::move(stride), std::move(padding),
              "max_pool2d", loc);
}

Tensor avg_pool2d(const Tensor &input, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> stride, std::vector<int64_t> padding, Loc loc) {
  return pool(input, false, std::move(kernel_size), std::move(stride), std::move(padding),
              "avg_pool2d", loc);
}

Tensor batch_norm(const Tensor &input, const Tensor &running_mean, const Tensor &running_var,
                  const Tensor &weight, const Tensor &bias, bool training, double momentum,
                  double eps, Loc loc) {
  checkFloat(input, "batch_norm", loc);
  SINTER_CHECK(input.dim() >= 2, loc,
               cat("batch_norm: expects an input [N, C, ...], got ", toString(input.shape())));
  if (input.dtype() == DType::f16 || input.dtype() == DType::bf16) // statistics in f32
    return batch_norm(input.to(DType::f32, loc), running_mean, running_var, weight, bias, training,
                      momentum, eps, loc)
        .to(input.dtype(), loc);
  int64_t channels = input.shape()[1];
  SINTER_CHECK(channels > 0, loc, "batch_norm: the input has no channels");
  for (const Tensor *t : {&running_mean, &running_var, &weight, &bias})
    SINTER_CHECK(!t->defined() || t->shape() == Shape{channels}, loc,
                 cat("batch_norm: per-channel tensors must have shape [", channels, "], got ",
                     toString(t->shape())));
  SINTER_CHECK(training || (running_mean.defined() && running_var.defined()), loc,
               "batch_norm: evaluation mode needs running_mean and running_var");
  Shape perChannel(input.dim(), 1);
  perChannel[1] = channels;
  std::vector<int64_t> dims = {0};
  for (int64_t d = 2; d < input.dim(); ++d)
    dims.push_back(d);
  Tensor mean, var;
  if (training) {
    int64_t count = input.numel() / channels;
    SINTER_CHECK(count > 1, loc,
                 cat("batch_norm: training needs more than one value per channel, got input ",
                     toString(input.shape())));
    mean = input.mean(dims, true, loc);
    Tensor centered = input - Operand(mean, loc);
    var = (centered * Operand(centered, loc)).mean(dims, true, loc);
    if (running_mean.defined()) {
      NoGradGuard noGrad;
      Tensor rm = running_mean, rv = running_var;
      double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
      rm.copy_(rm * Operand(1 - momentum, loc) +
                   Operand(mean.detach().reshape({channels}, loc) * Operand(momentum, loc), loc),
               loc);
      rv.copy_(
          rv * Operand(1 - momentum, loc) +
              Operand(var.detach().reshape({channels}, loc) * Operand(momentum * unbias, loc), loc),
          loc);
    }
  } else {
    mean = running_mean.reshape(perChannel, loc);
    var = running_var.reshape(perChannel, loc);
  }
  Tensor y = (input - Operand(mean, loc)) * Operand(rsqrt(var + Operand(eps, loc), loc), loc);
  if (weight.defined())
    y = y * Operand(weight.reshape(perChannel, loc), loc);
  if (bias.defined())
    y = y + Operand(bias.reshape(perChannel, loc), loc);
  return y;
}

} // namespace sinter::nn::functional
