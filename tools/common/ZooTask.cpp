//===- ZooTask.cpp - a zoo model with a batch and its loss ----------------===//
#include "ZooTask.h"

namespace sinter::tools {
namespace {

/// `count` integers in [0, bound) from a fixed generator (SplitMix64).
std::vector<int64_t> integers(int64_t count, int64_t bound, uint64_t seed) {
  std::vector<int64_t> out;
  uint64_t state = seed;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    out.push_back(static_cast<int64_t>((z ^ (z >> 31)) % static_cast<uint64_t>(bound)));
  }
  return out;
}

} // namespace

io::NamedTensors modelTensors(const nn::Module &model) {
  io::NamedTensors tensors;
  for (const auto &[name, p] : model.named_parameters())
    tensors.emplace_back("model." + name, p);
  for (const auto &[name, b] : model.named_buffers())
    tensors.emplace_back("model." + name, b);
  return tensors;
}

Tensor ZooTask::loss() const {
  Tensor logits = (*model)(inputs);
  if (name == "gpt-mini" || name == "gpt2")
    logits = logits.reshape({targets.numel(), -1});
  return nn::functional::cross_entropy(logits, targets);
}

ZooTask makeZooTask(const std::string &name, int64_t batch, int64_t length, uint64_t seed,
                    int64_t imageSize, double dropout) {
  SINTER_CHECK(batch > 0 && length > 0, Loc::current(),
               "the batch size and the sequence length must be positive, got " +
                   std::to_string(batch) + " and " + std::to_string(length));
  SINTER_CHECK(dropout == 0 ||
                   ((name == "gpt-mini" || name == "bert-mini") && dropout > 0 && dropout < 1),
               Loc::current(),
               "dropout " + std::to_string(dropout) + " for " + name +
                   ": gpt-mini and bert-mini take a dropout of 0 to below 1, the others none");
  manual_seed(seed);
  ZooTask task;
  task.name = name;
  auto images = [&](int64_t channels, int64_t side) {
    task.inputs = randn({batch, channels, side, side});
    task.targets = from_vector(integers(batch, 10, seed + 1), {batch});
  };
  auto tokens = [&](int64_t vocab, int64_t maxLength) {
    SINTER_CHECK(length <= maxLength, Loc::current(),
                 name + " takes at most " + std::to_string(maxLength) +
                     " tokens, got a length of " + std::to_string(length));
    task.inputs = from_vector(integers(batch * length, vocab, seed + 2), {batch, length});
  };
  if (name == "mlp") {
    task.model = models::mlp({.in_features = 784, .hidden = {256}, .num_classes = 10});
    task.inputs = randn({batch, 784});
    task.targets = from_vector(integers(batch, 10, seed + 1), {batch});
  } else if (name == "lenet") {
    task.model = models::lenet(1, 10);
    images(1, 28);
  } else if (name == "resnet18") {
    task.model = models::resnet18(10);
    SINTER_CHECK(imageSize >= 8, Loc::current(),
                 "resnet18 needs images of at least 8x8 pixels, got " + std::to_string(imageSize));
    images(3, imageSize);
  } else if (name == "gpt-mini" || name == "gpt2") {
    models::GPTConfig config = models::GPTConfig::named(name);
    config.dropout = dropout;
    auto gpt = std::make_shared<models::GPT>(config);
    tokens(gpt->config.vocab_size, gpt->config.context);
    // Next-token targets at every position.
    task.targets =
        from_vector(integers(batch * length, gpt->config.vocab_size, seed + 1), {batch * length});
    task.model = gpt;
  } else if (name == "bert-mini" || name == "bert-base") {
    models::BERTConfig config = models::BERTConfig::named(name);
    config.dropout = dropout;
    auto bert = std::make_shared<models::BERT>(config);
    tokens(bert->config.vocab_size, bert->config.max_positions);
    // One class per sequence.
    task.targets = from_vector(integers(batch, bert->config.num_classes, seed + 1), {batch});
    task.model = bert;
  } else {
    throwError("unknown model '" + name + "' (the zoo has " + kZooModels + ")", Loc::current());
  }
  // Parameters and batch become data, as at the start of any later step.
  mark_step();
  return task;
}

std::vector<lazy::NodePtr> recordStep(ZooTask &task, optim::Optimizer *optimizer) {
  Tensor loss = task.loss();
  loss.backward();
  if (optimizer != nullptr)
    optimizer->step();
  std::vector<lazy::NodePtr> outputs = {lazy::node_of(loss)};
  for (const Tensor &p : task.model->parameters())
    outputs.push_back(lazy::node_of(optimizer != nullptr ? p : p.grad()));
  return outputs;
}

} // namespace sinter::tools
