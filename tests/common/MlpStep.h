//===- MlpStep.h - a small classifier's training step, for tests ---------===//
//
// An MLP 64-128-10 trained on one batch: `rows` normal rows drawn from
// `seed`, every label 3; SGD (lr 0.1) or AdamW (lr 1e-3). record() records
// one training step in the current session and returns its loss.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TESTS_COMMON_MLPSTEP_H
#define SINTER_TESTS_COMMON_MLPSTEP_H

#include "sinter/sinter.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace sinter::test_support {

struct MlpStep {
  enum class Optimizer { Sgd, AdamW };

  MlpStep(uint64_t seed, int64_t rows, Optimizer which) {
    manual_seed(seed);
    model = models::mlp({.in_features = 64, .hidden = {128}, .num_classes = 10});
    if (which == Optimizer::AdamW)
      optimizer =
          std::make_unique<optim::AdamW>(model->parameters(), optim::AdamWOptions{.lr = 1e-3});
    else
      optimizer = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{.lr = 0.1});
    x = randn({rows, 64});
    y = from_vector<int64_t>(std::vector<int64_t>(static_cast<size_t>(rows), 3), {rows});
  }

  Tensor record() {
    optimizer->zero_grad();
    Tensor loss = nn::functional::cross_entropy((*model)(x), y);
    loss.backward();
    optimizer->step();
    return loss;
  }

  std::shared_ptr<nn::Sequential> model;
  std::unique_ptr<optim::Optimizer> optimizer;
  Tensor x, y;
};

} // namespace sinter::test_support

#endif // SINTER_TESTS_COMMON_MLPSTEP_H
