//===- Models.cpp - the model zoo -----------------------------------------===//
#include "sinter/models/Models.h"

#include "../Format.h"
#include "sinter/Error.h"
#include "sinter/nn/Functional.h"

#include <cmath>

namespace sinter::models {
namespace F = nn::functional;

namespace {

/// GPT-2 / BERT initialisation: weights N(0, std), biases zero.
void initNormal(const Tensor &weight, double std) {
  NoGradGuard noGrad;
  Tensor w = weight;
  w.copy_(randn(weight.shape()) * std);
}

void initLinear(nn::Linear &linear, double std) {
  initNormal(linear.weight, std);
  if (linear.bias.defined()) {
    NoGradGuard noGrad;
    Tensor b = linear.bias;
    b.copy_(zeros(b.shape()));
  }
}

void initAttention(nn::MultiheadAttention &attn, double std, double outStd) {
  initNormal(attn.in_proj_weight, std);
  initLinear(*attn.out_proj, outStd);
}

void checkIds(const Tensor &ids, int64_t limit, std::string_view model, Loc loc) {
  SINTER_CHECK(ids.defined() && ids.dim() == 2, loc,
               cat(model, ": expects token ids [batch, length], got ",
                   ids.defined() ? toString(ids.shape()) : "undefined"));
  SINTER_CHECK(ids.dtype() == DType::i32 || ids.dtype() == DType::i64, loc,
               cat(model, ": token ids must be i32 or i64, got ", name(ids.dtype())));
  SINTER_CHECK(ids.shape()[1] <= limit, loc,
               cat(model, ": sequence length ", ids.shape()[1], " exceeds the model's ", limit,
                   " positions"));
}

/// One pre-LayerNorm GPT-2 block.
class GPTBlock : public nn::Module {
public:
  explicit GPTBlock(const GPTConfig &c) : dropout(c.dropout) {
    ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(Shape{c.d_model}));
    attn = register_module("attn",
                           std::make_shared<nn::MultiheadAttention>(c.d_model, c.heads, c.dropout));
    ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(Shape{c.d_model}));
    c_fc = register_module("c_fc", std::make_shared<nn::Linear>(c.d_model, 4 * c.d_model));
    c_proj = register_module("c_proj", std::make_shared<nn::Linear>(4 * c.d_model, c.d_model));
    double residualStd = 0.02 / std::sqrt(2.0 * static_cast<double>(c.layers));
    initAttention(*attn, 0.02, residualStd);
    initLinear(*c_fc, 0.02);
    initLinear(*c_proj, residualStd);
  }

  Tensor forward(const Tensor &x, Loc loc) override {
    Tensor h = ln_1->forward(x, loc);
    Tensor y =
        x +
        Operand(F::dropout(attn->forward(h, h, h, true, loc), dropout, is_training(), loc), loc);
    Tensor m =
        c_proj->forward(F::gelu(c_fc->forward(ln_2->forward(y, loc), loc), "tanh", loc), loc);
    return y + Operand(F::dropout(m, dropout, is_training(), loc), loc);
  }
  std::string type() const override { return "GPTBlock"; }

  double dropout;
  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Linear> c_fc, c_proj;
};

/// One post-LayerNorm BERT encoder block.
class BERTBlock : public nn::Module {
public:
  explicit BERTBlock(const BERTConfig &c) : dropout(c.dropout) {
    attn = register_module("attn",
                           std::make_shared<nn::MultiheadAttention>(c.d_model, c.heads, c.dropout));
    attn_ln = register_module("attn_ln", std::make_shared<nn::LayerNorm>(Shape{c.d_model}, 1e-12));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(c.d_model, 4 * c.d_model));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(4 * c.d_model, c.d_model));
    ffn_ln = register_module("ffn_ln", std::make_shared<nn::LayerNorm>(Shape{c.d_model}, 1e-12));
    initAttention(*attn, 0.02, 0.02);
    initLinear(*fc1, 0.02);
    initLinear(*fc2, 0.02);
  }

  Tensor forward(const Tensor &x, Loc loc) override {
    Tensor a = F::dropout(attn->forward(x, x, x, false, loc), dropout, is_training(), loc);
    Tensor y = attn_ln->forward(x + Operand(a, loc), loc);
    Tensor m = fc2->forward(F::gelu(fc1->forward(y, loc), "none", loc), loc);
    return ffn_ln->forward(y + Operand(F::dropout(m, dropout, is_training(), loc), loc), loc);
  }
  std::string type() const override { return "BERTBlock"; }

  double dropout;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::LayerNorm> attn_ln, ffn_ln;
  std::shared_ptr<nn::Linear> fc1, fc2;
};

} // namespace

std::shared_ptr<nn::Sequential> mlp(const MLPConfig &config) {
  auto model = std::make_shared<nn::Sequential>();
  int64_t width = config.in_features;
  for (int64_t hidden : config.hidden) {
    model->push_back(std::make_shared<nn::Linear>(width, hidden));
    model->push_back(std::make_shared<nn::ReLU>());
    if (config.dropout > 0)
      model->push_back(std::make_shared<nn::Dropout>(config.dropout));
    width = hidden;
  }
  model->push_back(std::make_shared<nn::Linear>(width, config.num_classes));
  return model;
}

GPTConfig GPTConfig::named(std::string_view name) {
  if (name == "gpt-mini")
    return {};
  if (name == "gpt-small")
    return {.vocab_size = 8192, .context = 256, .layers = 6, .heads = 6, .d_model = 384};
  if (name == "gpt2")
    return {.vocab_size = 50257, .context = 1024, .layers = 12, .heads = 12, .d_model = 768};
  throwError(cat("unknown GPT config '", name, "'; expected gpt-mini, gpt-small or gpt2"),
             Loc::current());
}

GPT::GPT(const GPTConfig &c) : config(c) {
  SINTER_CHECK(c.d_model % c.heads == 0, Loc::current(),
               cat("GPT: d_model ", c.d_model, " is not divisible by heads ", c.heads));
  auto wte = register_module("wte", std::make_shared<nn::Embedding>(c.vocab_size, c.d_model));
  auto wpe = register_module("wpe", std::make_shared<nn::Embedding>(c.context, c.d_model));
  initNormal(wte->weight, 0.02);
  initNormal(wpe->weight, 0.01);
  auto blocks = register_module("h", std::make_shared<nn::Sequential>());
  for (int64_t i = 0; i < c.layers; ++i)
    blocks->push_back(std::make_shared<GPTBlock>(c));
  register_module("ln_f", std::make_shared<nn::LayerNorm>(Shape{c.d_model}));
}

Tensor GPT::forward(const Tensor &ids, Loc loc) {
  checkIds(ids, config.context, "GPT", loc);
  auto &wte = static_cast<nn::Embedding &>(*children()[0].second);
  auto &wpe = static_cast<nn::Embedding &>(*children()[1].second);
  Tensor positions = arange(ids.shape()[1], DType::i64, loc);
  Tensor x = wte.forward(ids, loc) + Operand(wpe.forward(positions, loc), loc);
  x = F::dropout(x, config.dropout, is_training(), loc);
  x = children()[2].second->forward(x, loc);
  x = children()[3].second->forward(x, loc);
  return matmul(x, wte.weight.t(loc), loc); // tied: logits through the token embedding
}

BERTConfig BERTConfig::named(std::string_view name) {
  if (name == "bert-mini")
    return {};
  if (name == "bert-base")
    return {.vocab_size = 30522, .max_positions = 512, .layers = 12, .heads = 12, .d_model = 768};
  throwError(cat("unknown BERT config '", name, "'; expected bert-mini or bert-base"),
             Loc::current());
}

BERT::BERT(const BERTConfig &c) : config(c) {
  SINTER_CHECK(c.d_model % c.heads == 0, Loc::current(),
               cat("BERT: d_model ", c.d_model, " is not divisible by heads ", c.heads));
  auto word =
      register_module("word_embeddings", std::make_shared<nn::Embedding>(c.vocab_size, c.d_model));
  auto position = register_module("position_embeddings",
                                  std::make_shared<nn::Embedding>(c.max_positions, c.d_model));
  auto type =
      register_module("token_type_embeddings", std::make_shared<nn::Embedding>(2, c.d_model));
  for (const Tensor &w : {word->weight, position->weight, type->weight})
    initNormal(w, 0.02);
  register_module("embeddings_ln", std::make_shared<nn::LayerNorm>(Shape{c.d_model}, 1e-12));
  auto blocks = register_module("layers", std::make_shared<nn::Sequential>());
  for (int64_t i = 0; i < c.layers; ++i)
    blocks->push_back(std::make_shared<BERTBlock>(c));
  auto pooler = register_module("pooler", std::make_shared<nn::Linear>(c.d_model, c.d_model));
  auto classifier =
      register_module("classifier", std::make_shared<nn::Linear>(c.d_model, c.num_classes));
  initLinear(*pooler, 0.02);
  initLinear(*classifier, 0.02);
}

Tensor BERT::forward(const Tensor &ids, Loc loc) {
  checkIds(ids, config.max_positions, "BERT", loc);
  const auto &child = children();
  auto &word = static_cast<nn::Embedding &>(*child[0].second);
  auto &position = static_cast<nn::Embedding &>(*child[1].second);
  auto &tokenType = static_cast<nn::Embedding &>(*child[2].second);
  int64_t length = ids.shape()[1];
  Tensor x =
      word.forward(ids, loc) + Operand(position.forward(arange(length, DType::i64, loc), loc), loc);
  x = x + Operand(tokenType.weight.slice(0, 0, 1, 1, loc), loc); // one segment: type 0
  x = F::dropout(child[3].second->forward(x, loc), config.dropout, is_training(), loc);
  x = child[4].second->forward(x, loc);
  Tensor first = x.slice(1, 0, 1, 1, loc).squeeze(1, loc); // the [CLS] position
  Tensor pooled = tanh(child[5].second->forward(first, loc), loc);
  return child[6].second->forward(F::dropout(pooled, config.dropout, is_training(), loc), loc);
}

} // namespace sinter::models

namespace sinter::models {
namespace {

/// ResNet's basic block: two 3x3 conv + BN, with a 1x1 conv + BN shortcut
/// when the shape changes.
class BasicBlock : public nn::Module {
public:
  BasicBlock(int64_t in, int64_t out, int64_t stride) {
    conv1 =
        register_module("conv1", std::make_shared<nn::Conv2d>(in, out, 3, stride, 1, 1, 1, false));
    bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(out));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(out, out, 3, 1, 1, 1, 1, false));
    bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(out));
    if (stride != 1 || in != out) {
      auto shortcut = std::make_shared<nn::Sequential>();
      shortcut->push_back(std::make_shared<nn::Conv2d>(in, out, 1, stride, 0, 1, 1, false));
      shortcut->push_back(std::make_shared<nn::BatchNorm2d>(out));
      downsample = register_module("downsample", shortcut);
    }
  }

  Tensor forward(const Tensor &x, Loc loc) override {
    Tensor y = relu(bn1->forward(conv1->forward(x, loc), loc), loc);
    y = bn2->forward(conv2->forward(y, loc), loc);
    Tensor skip = downsample ? downsample->forward(x, loc) : x;
    return relu(y + Operand(skip, loc), loc);
  }
  std::string type() const override { return "BasicBlock"; }

  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::Sequential> downsample;
};

class ResNet : public nn::Module {
public:
  ResNet(int64_t num_classes, int64_t in_channels) {
    auto stem = register_module("stem", std::make_shared<nn::Sequential>());
    stem->push_back(std::make_shared<nn::Conv2d>(in_channels, 64, 3, 1, 1, 1, 1, false));
    stem->push_back(std::make_shared<nn::BatchNorm2d>(64));
    stem->push_back(std::make_shared<nn::ReLU>());
    int64_t width = 64;
    for (int64_t stage = 0; stage < 4; ++stage) {
      int64_t channels = 64 << stage;
      auto layer =
          register_module("layer" + std::to_string(stage + 1), std::make_shared<nn::Sequential>());
      layer->push_back(std::make_shared<BasicBlock>(width, channels, stage == 0 ? 1 : 2));
      layer->push_back(std::make_shared<BasicBlock>(channels, channels, 1));
      width = channels;
    }
    fc = register_module("fc", std::make_shared<nn::Linear>(width, num_classes));
  }

  Tensor forward(const Tensor &x, Loc loc) override {
    SINTER_CHECK(x.defined() && x.dim() == 4, loc,
                 cat("resnet18: expects images [N, C, H, W], got ",
                     x.defined() ? toString(x.shape()) : "undefined"));
    Tensor y = x;
    for (const auto &[name, child] : children())
      if (child != fc)
        y = child->forward(y, loc);
    return fc->forward(y.mean({2, 3}, false, loc), loc); // global average pooling
  }
  std::string type() const override { return "ResNet"; }

  std::shared_ptr<nn::Linear> fc;
};

} // namespace

std::shared_ptr<nn::Sequential> lenet(int64_t in_channels, int64_t num_classes) {
  auto model = std::make_shared<nn::Sequential>();
  model->push_back(std::make_shared<nn::Conv2d>(in_channels, 6, 5, 1, 2));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::MaxPool2d>(2));
  model->push_back(std::make_shared<nn::Conv2d>(6, 16, 5));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::MaxPool2d>(2));
  model->push_back(std::make_shared<nn::Flatten>());
  model->push_back(std::make_shared<nn::Linear>(16 * 5 * 5, 120));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::Linear>(120, 84));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::Linear>(84, num_classes));
  return model;
}

std::shared_ptr<nn::Module> resnet18(int64_t num_classes, int64_t in_channels) {
  return std::make_shared<ResNet>(num_classes, in_channels);
}

} // namespace sinter::models
