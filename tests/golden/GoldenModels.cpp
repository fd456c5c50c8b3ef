//===- GoldenModels.cpp - run a model step and dump it for PyTorch --------===//
//
// Usage: golden_models <gpt-mini|bert-mini> <out-dir>
// Builds the model with a fixed seed, runs forward, loss and backward on the
// reference executor (f32), and writes every parameter, the inputs, the loss
// and every parameter gradient to <out-dir> (manifest.txt + raw little-endian
// files), for compare_with_torch.py to recompute with PyTorch.
//
//===----------------------------------------------------------------------===//
#include "TensorDump.h"

#include "sinter/sinter.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace sinter;

Tensor tokens(int64_t batch, int64_t length, int64_t vocab, int64_t salt) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < batch * length; ++i)
    ids.push_back((i * 7919 + salt * 104729 + (i * i) % 13) % vocab);
  return from_vector(ids, {batch, length});
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: golden_models <gpt-mini|bert-mini> <out-dir>\n");
    return 2;
  }
  std::string model = argv[1];
  tools::TensorDump dump(argv[2]);
  try {
    manual_seed(1234);
    std::shared_ptr<nn::Module> net;
    Tensor ids, targets, logits, loss;
    const int64_t batch = 2, length = 16;
    if (model == "gpt-mini") {
      auto config = models::GPTConfig::named("gpt-mini");
      net = std::make_shared<models::GPT>(config);
      ids = tokens(batch, length, config.vocab_size, 1);
      targets = tokens(batch, length, config.vocab_size, 2);
      logits = (*net)(ids);
      loss = nn::functional::cross_entropy(logits.reshape({batch * length, config.vocab_size}),
                                           targets.reshape({batch * length}));
    } else if (model == "bert-mini") {
      auto config = models::BERTConfig::named("bert-mini");
      net = std::make_shared<models::BERT>(config);
      ids = tokens(batch, length, config.vocab_size, 3);
      targets = from_vector<int64_t>({1, 0}, {batch});
      logits = (*net)(ids);
      loss = nn::functional::cross_entropy(logits, targets);
    } else {
      std::fprintf(stderr, "golden_models: unknown model '%s'\n", model.c_str());
      return 2;
    }
    loss.backward();
    dump.write("input", "ids", ids);
    dump.write("input", "targets", targets);
    dump.write("output", "loss", loss);
    for (auto &[name, p] : net->named_parameters()) {
      dump.write("param", name, p);
      dump.write("grad", name, p.grad());
    }
    std::printf("%s: loss %.6f, %zu parameter tensors\n", model.c_str(), loss.item<double>(),
                net->named_parameters().size());
  } catch (const Error &error) {
    std::fprintf(stderr, "golden_models: %s\n", error.what());
    return 1;
  }
  return 0;
}
