//===- ZooTask.h - a zoo model with a batch and its loss -------*- C++ -*-===//
//
// What the tools train, dump and benchmark: a model of the zoo, a fixed
// batch of seeded synthetic data of the model's input kind (images or token
// ids), and the loss a training step computes from them.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_ZOOTASK_H
#define SINTER_TOOLS_ZOOTASK_H

#include "sinter/sinter.h"

#include <memory>
#include <string>
#include <vector>

namespace sinter::tools {

struct ZooTask {
  std::string name;
  std::shared_ptr<nn::Module> model;
  Tensor inputs, targets;
  /// Forward and cross-entropy loss on the batch (gpt-mini: next-token loss
  /// over every position).
  Tensor loss() const;
};

/// The model's tensors as a checkpoint (and an artifact's weights) names
/// them, "model.<name>": every parameter, then every buffer (handles:
/// restoring into them restores the model).
io::NamedTensors modelTensors(const nn::Module &model);

/// The names makeZooTask accepts.
inline constexpr const char *kZooModels =
    "mlp, lenet, resnet18, gpt-mini, bert-mini, gpt2 (124M) or bert-base (110M)";

/// Builds `name` with parameters from manual_seed(seed) and a batch of
/// `batch` samples (sequences of `length` tokens for gpt-mini, bert-mini,
/// gpt2 and bert-base, the real sizes: for planning and compiling; resnet18's images are
/// `imageSize` pixels square, 32 unless given; gpt-mini and bert-mini drop out `dropout` of their
/// activations in training). Throws sinter::Error for an unknown name, a bad size, or a dropout for
/// a model without one.
ZooTask makeZooTask(const std::string &name, int64_t batch, int64_t length, uint64_t seed = 0,
                    int64_t imageSize = 32, double dropout = 0);

/// Records one training step of `task` without running it: the loss, its
/// backward and, given one, `optimizer`'s update. The graph's outputs: the
/// loss, then each parameter (updated), or each gradient (no optimizer).
/// What sinter-dump-step prints and `sinter-bench --compile-only` compiles.
std::vector<lazy::NodePtr> recordStep(ZooTask &task, optim::Optimizer *optimizer);

} // namespace sinter::tools

#endif // SINTER_TOOLS_ZOOTASK_H
