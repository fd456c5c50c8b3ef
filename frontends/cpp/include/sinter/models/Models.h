//===- Models.h - the model zoo -------------------------------------------===//
//
// Models built from a config, each a sinter::nn::Module: an MLP classifier,
// GPT-2 (decoder-only language model) and BERT (encoder with a
// classification head). Named configs: "gpt-mini" ... "gpt2" (124M),
// "bert-mini" ... "bert-base".
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_MODELS_MODELS_H
#define SINTER_MODELS_MODELS_H

#include "sinter/nn/Layers.h"

#include <memory>
#include <string_view>
#include <vector>

namespace sinter::models {

struct MLPConfig {
  int64_t in_features = 784;
  std::vector<int64_t> hidden = {128};
  int64_t num_classes = 10;
  double dropout = 0.0;
};

/// Linear -> ReLU (-> Dropout) for each hidden size, then a Linear to the
/// classes. forward: [B, in] -> logits [B, classes].
std::shared_ptr<nn::Sequential> mlp(const MLPConfig &config = {});

/// LeNet-5 for [N, channels, 28, 28] (or 32x32 with padding 0) images:
/// conv(5, pad 2) 6 -> pool -> conv(5) 16 -> pool -> 120 -> 84 -> classes.
std::shared_ptr<nn::Sequential> lenet(int64_t in_channels = 1, int64_t num_classes = 10);

/// ResNet-18 for small images (CIFAR style: a 3x3 stem, no max pool), four
/// stages of two basic blocks (64, 128, 256, 512 channels), global average
/// pooling and a Linear to the classes. forward: [N, 3, H, W] -> [N, classes].
std::shared_ptr<nn::Module> resnet18(int64_t num_classes = 10, int64_t in_channels = 3);

struct GPTConfig {
  int64_t vocab_size = 4096;
  int64_t context = 128;
  int64_t layers = 4;
  int64_t heads = 4;
  int64_t d_model = 256;
  double dropout = 0.0;

  /// "gpt-mini" (4 layers, d_model 256, 4 heads, context 128, vocab 4096),
  /// "gpt-small" (6, 384, 6, 256, 8192), "gpt2" (12, 768, 12, 1024, 50257).
  static GPTConfig named(std::string_view name);
};

/// GPT-2: token + learned position embeddings, pre-LayerNorm blocks of
/// causal self-attention and a tanh-GELU MLP, a final LayerNorm, and logits
/// through the token embedding (tied). forward: ids [B, T] -> [B, T, vocab].
class GPT : public nn::Module {
public:
  explicit GPT(const GPTConfig &config);
  Tensor forward(const Tensor &ids, Loc loc = Loc::current()) override;
  std::string type() const override { return "GPT"; }
  const GPTConfig config;
};

struct BERTConfig {
  int64_t vocab_size = 4096;
  int64_t max_positions = 128;
  int64_t layers = 4;
  int64_t heads = 4;
  int64_t d_model = 256;
  int64_t num_classes = 2;
  double dropout = 0.0;

  /// "bert-mini" (4 layers, d_model 256, 4 heads, 128 positions, vocab 4096),
  /// "bert-base" (12, 768, 12, 512, 30522).
  static BERTConfig named(std::string_view name);
};

/// BERT: word + position + token-type embeddings with LayerNorm, post-
/// LayerNorm encoder blocks (self-attention, GELU MLP), and a classifier on
/// the first token (tanh pooler + Linear). forward: ids [B, T] -> [B, classes].
class BERT : public nn::Module {
public:
  explicit BERT(const BERTConfig &config);
  Tensor forward(const Tensor &ids, Loc loc = Loc::current()) override;
  std::string type() const override { return "BERT"; }
  const BERTConfig config;
};

} // namespace sinter::models

#endif // SINTER_MODELS_MODELS_H
