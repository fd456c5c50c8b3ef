//===- Layers.cpp - the layers of sinter::nn ------------------------------===//
#include "sinter/nn/Layers.h"

#include "../Format.h"
#include "sinter/Error.h"
#include "sinter/nn/Functional.h"

#include <cmath>

namespace sinter::nn {
namespace F = functional;

namespace {
/// Uniform in [-bound, bound) from the global generator.
Tensor uniform(const Shape &shape, double bound) { return rand(shape) * (2 * bound) - bound; }
} // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias) {
  SINTER_CHECK(in_features > 0 && out_features > 0, Loc::current(),
               cat("Linear: sizes must be positive, got ", in_features, " -> ", out_features));
  double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight", uniform({out_features, in_features}, bound).detach());
  if (with_bias)
    bias = register_parameter("bias", uniform({out_features}, bound).detach());
}

Tensor Linear::forward(const Tensor &x, Loc loc) { return F::linear(x, weight, bias, loc); }

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim) {
  weight = register_parameter("weight", randn({num_embeddings, embedding_dim}).detach());
}

Tensor Embedding::forward(const Tensor &indices, Loc loc) {
  return F::embedding(indices, weight, loc);
}

LayerNorm::LayerNorm(Shape shape, double eps_, bool affine)
    : normalized_shape(std::move(shape)), eps(eps_) {
  if (affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    bias = register_parameter("bias", zeros(normalized_shape));
  }
}

Tensor LayerNorm::forward(const Tensor &x, Loc loc) {
  return F::layer_norm(x, normalized_shape, weight, bias, eps, loc);
}

Dropout::Dropout(double p_) : p(p_) {}
Tensor Dropout::forward(const Tensor &x, Loc loc) { return F::dropout(x, p, is_training(), loc); }

Tensor ReLU::forward(const Tensor &x, Loc loc) { return F::relu(x, loc); }

GELU::GELU(std::string approximate_) : approximate(std::move(approximate_)) {}
Tensor GELU::forward(const Tensor &x, Loc loc) { return F::gelu(x, approximate, loc); }

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride_,
               int64_t padding_, int64_t dilation_, int64_t groups_, bool with_bias)
    : stride(stride_), padding(padding_), dilation(dilation_), groups(groups_) {
  SINTER_CHECK(in_channels > 0 && out_channels > 0 && kernel_size > 0 && groups > 0 &&
                   in_channels % groups == 0 && out_channels % groups == 0,
               Loc::current(),
               cat("Conv2d: invalid configuration ", in_channels, " -> ", out_channels, ", kernel ",
                   kernel_size, ", groups ", groups));
  int64_t fanIn = in_channels / groups * kernel_size * kernel_size;
  double bound = 1.0 / std::sqrt(static_cast<double>(fanIn));
  weight = register_parameter(
      "weight",
      uniform({out_channels, in_channels / groups, kernel_size, kernel_size}, bound).detach());
  if (with_bias)
    bias = register_parameter("bias", uniform({out_channels}, bound).detach());
}

Tensor Conv2d::forward(const Tensor &x, Loc loc) {
  return F::conv2d(x, weight, bias, {stride, stride}, {padding, padding}, {dilation, dilation},
                   groups, loc);
}

BatchNorm2d::BatchNorm2d(int64_t num_features, double eps_, double momentum_)
    : eps(eps_), momentum(momentum_) {
  weight = register_parameter("weight", ones({num_features}));
  bias = register_parameter("bias", zeros({num_features}));
  running_mean = register_buffer("running_mean", zeros({num_features}));
  running_var = register_buffer("running_var", ones({num_features}));
}

Tensor BatchNorm2d::forward(const Tensor &x, Loc loc) {
  SINTER_CHECK(x.defined() && x.dim() == 4, loc,
               cat("BatchNorm2d: expects an input [N, C, H, W], got ",
                   x.defined() ? toString(x.shape()) : "undefined"));
  return F::batch_norm(x, running_mean, running_var, weight, bias, is_training(), momentum, eps,
                       loc);
}

Tensor Flatten::forward(const Tensor &x, Loc loc) {
  SINTER_CHECK(x.defined() && x.dim() >= 1, loc, "Flatten: expects a tensor of rank >= 1");
  return x.reshape({x.shape()[0], -1}, loc);
}

MaxPool2d::MaxPool2d(int64_t kernel_size_, int64_t stride_, int64_t padding_)
    : kernel_size(kernel_size_), stride(stride_ == 0 ? kernel_size_ : stride_), padding(padding_) {}

Tensor MaxPool2d::forward(const Tensor &x, Loc loc) {
  return F::max_pool2d(x, {kernel_size, kernel_size}, {stride, stride}, {padding, padding}, loc);
}

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto &m : modules)
    push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(children().size()), std::move(module));
}

Tensor Sequential::forward(const Tensor &x, Loc loc) {
  Tensor y = x;
  for (const auto &[name, child] : children())
    y = child->forward(y, loc);
  return y;
}

MultiheadAttention::MultiheadAttention(int64_t embed_dim_, int64_t num_heads_, double dropout_,
                                       bool bias)
    : embed_dim(embed_dim_), num_heads(num_heads_), dropout(dropout_) {
  SINTER_CHECK(num_heads > 0 && embed_dim % num_heads == 0, Loc::current(),
               cat("MultiheadAttention: embed_dim ", embed_dim, " is not divisible by num_heads ",
                   num_heads));
  double bound = std::sqrt(6.0 / static_cast<double>(embed_dim + 3 * embed_dim)); // xavier
  in_proj_weight =
      register_parameter("in_proj_weight", uniform({3 * embed_dim, embed_dim}, bound).detach());
  if (bias)
    in_proj_bias = register_parameter("in_proj_bias", zeros({3 * embed_dim}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim, embed_dim, bias));
  if (bias) {
    NoGradGuard noGrad;
    out_proj->bias.copy_(zeros({embed_dim}));
  }
}

Tensor MultiheadAttention::forward(const Tensor &query, const Tensor &key, const Tensor &value,
                                   bool is_causal, Loc loc) {
  for (const Tensor *t : {&query, &key, &value})
    SINTER_CHECK(t->defined() && t->dim() == 3 && t->shape()[2] == embed_dim, loc,
                 cat("MultiheadAttention: expects [batch, length, ", embed_dim, "] inputs, got ",
                     toString(t->shape())));
  int64_t batch = query.shape()[0], head = embed_dim / num_heads;
  auto project = [&](const Tensor &x, int64_t part) {
    Tensor w = in_proj_weight.slice(0, part * embed_dim, (part + 1) * embed_dim, 1, loc);
    Tensor b = in_proj_bias.defined()
                   ? in_proj_bias.slice(0, part * embed_dim, (part + 1) * embed_dim, 1, loc)
                   : Tensor();
    // [B, L, E] -> [B, heads, L, head_dim]
    return F::linear(x, w, b, loc)
        .reshape({batch, x.shape()[1], num_heads, head}, loc)
        .transpose(1, 2, loc);
  };
  Tensor q = project(query, 0), k = project(key, 1), v = project(value, 2);
  Tensor attended;
  if (dropout > 0 && is_training()) {
    // Dropout on the attention weights, as PyTorch's MultiheadAttention does.
    Tensor scores = matmul(q, k.transpose(-2, -1, loc), loc) *
                    Operand(1.0 / std::sqrt(static_cast<double>(head)), loc);
    if (is_causal) {
      Tensor rows = arange(scores.shape()[2], DType::i64, loc).unsqueeze(1, loc);
      Tensor cols = arange(scores.shape()[3], DType::i64, loc);
      scores = scores.masked_fill(cols > Operand(rows, loc), -INFINITY, loc);
    }
    attended = matmul(F::dropout(F::softmax(scores, -1, loc), dropout, true, loc), v, loc);
  } else {
    attended = F::scaled_dot_product_attention(q, k, v, is_causal, loc);
  }
  Tensor merged = attended.transpose(1, 2, loc).reshape({batch, query.shape()[1], embed_dim}, loc);
  return out_proj->forward(merged, loc);
}

Tensor MultiheadAttention::forward(const Tensor &x, Loc loc) {
  return forward(x, x, x, false, loc);
}

} // namespace sinter::nn
