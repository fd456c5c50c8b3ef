//===- Layers.h - the layers of sinter::nn --------------------------------===//
//
// PyTorch's layers with PyTorch's default initialisations, drawn from the
// global generator (sinter::manual_seed).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_NN_LAYERS_H
#define SINTER_NN_LAYERS_H

#include "sinter/nn/Module.h"

#include <initializer_list>
#include <string>

namespace sinter::nn {

/// y = x W^T + b. W is [out, in], uniform in +-1/sqrt(in) (PyTorch's
/// kaiming_uniform with a = sqrt(5)); b likewise.
class Linear : public Module {
public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "Linear"; }
  Tensor weight, bias;
};

/// A lookup table [num_embeddings, dim], standard normal.
class Embedding : public Module {
public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor forward(const Tensor &indices, Loc loc = Loc::current()) override;
  std::string type() const override { return "Embedding"; }
  Tensor weight;
};

class LayerNorm : public Module {
public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "LayerNorm"; }
  Shape normalized_shape;
  double eps;
  Tensor weight, bias;
};

class Dropout : public Module {
public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "Dropout"; }
  double p;
};

class ReLU : public Module {
public:
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "ReLU"; }
};

class GELU : public Module {
public:
  /// approximate: "none" (erf) or "tanh".
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "GELU"; }
  std::string approximate;
};

/// 2-D convolution; weight [out, in / groups, k, k] and bias uniform in
/// +-1/sqrt(fan_in), as PyTorch.
class Conv2d : public Module {
public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
         int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "Conv2d"; }
  int64_t stride, padding, dilation, groups;
  Tensor weight, bias;
};

/// Batch normalisation of [N, C, H, W] with running statistics (buffers
/// running_mean, running_var) updated in training mode.
class BatchNorm2d : public Module {
public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1);
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "BatchNorm2d"; }
  double eps, momentum;
  Tensor weight, bias, running_mean, running_var;
};

/// Flattens all dimensions after the first: [N, ...] -> [N, prod(...)].
class Flatten : public Module {
public:
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "Flatten"; }
};

class MaxPool2d : public Module {
public:
  explicit MaxPool2d(int64_t kernel_size, int64_t stride = 0, int64_t padding = 0);
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "MaxPool2d"; }
  int64_t kernel_size, stride, padding;
};

/// Runs its children in order; children are named "0", "1", ...
class Sequential : public Module {
public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "Sequential"; }
  size_t size() const { return children().size(); }
};

/// Multi-head attention over batch-first inputs [B, L, E]. Parameters as
/// PyTorch's: in_proj_weight [3E, E] (xavier uniform), in_proj_bias [3E]
/// (zeros), out_proj (Linear, bias zeros).
class MultiheadAttention : public Module {
public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true);
  /// Attention of query [B, L, E] over key/value [B, S, E].
  Tensor forward(const Tensor &query, const Tensor &key, const Tensor &value,
                 bool is_causal = false, Loc loc = Loc::current());
  /// Self-attention.
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override;
  std::string type() const override { return "MultiheadAttention"; }
  int64_t embed_dim, num_heads;
  double dropout;
  Tensor in_proj_weight, in_proj_bias;
  std::shared_ptr<Linear> out_proj;
};

} // namespace sinter::nn

#endif // SINTER_NN_LAYERS_H
