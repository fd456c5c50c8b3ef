//===- Task.h - what a zoo job trains: model, data, loss -------*- C++ -*-===//
//
// A zoo job's task: the model it builds, its training and held-out data
// (Fashion-MNIST, or tokens of a text or a token file), its loss and a
// training step, the held-out evaluation, and the compiled-against-eager
// throughput its summary reports.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_TRAIN_TASK_H
#define SINTER_TOOLS_TRAIN_TASK_H

#include "Job.h"

#include "sinter/sinter.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinter::tools {

/// The model, its data and its loss.
struct Task {
  std::string name;
  bool languageModel = false;
  std::shared_ptr<const data::Dataset> train, heldOut;
  std::string heldOutSplit; ///< "test" or "val"
  int64_t vocab = 0, context = 0;
  double dropout = 0;
  double unigramLoss = 0; ///< language models: the held-out loss of token frequencies alone
  std::string dataNote;

  /// A fresh model of the job's entry point.
  std::shared_ptr<nn::Module> makeModel() const;
  /// The model's logits for `inputs`: a row of classes per example (per
  /// position, for a language model).
  Tensor logits(nn::Module &model, const Tensor &inputs) const;
  /// The mean cross-entropy of `batch`.
  Tensor loss(nn::Module &model, const data::Batch &batch) const;
  /// Records one training step on `micro` (forward, loss, backward of each
  /// micro-batch, the gradients clipped to `gradClip` when positive, the
  /// optimizer's update) and returns its loss; it runs at the next
  /// mark_step (or is planned). Several micro-batches accumulate their
  /// gradients, each loss scaled by 1/K so that the gradient is the mean
  /// over the K micro-batches as over one batch of them all; every
  /// micro-batch but the last is its own step (mark_step), so a step holds
  /// the activations of one micro-batch, and only the last one reduces over
  /// the ranks and updates (Note [Data-parallel jobs]).
  /// The gradients are cleared after the update, so the compiled step
  /// returns none and frees each once its parameter is updated.
  /// In a world of several ranks the gradients are averaged over them
  /// before clipping (by the optimizer itself when its state is sharded:
  /// `sharded`, which then clips too), and so is the loss returned.
  Tensor step(nn::Module &model, optim::Optimizer &optimizer, const std::vector<data::Batch> &micro,
              double gradClip = 0, bool sharded = false) const;
  /// step() of one batch.
  Tensor step(nn::Module &model, optim::Optimizer &optimizer, const data::Batch &batch,
              double gradClip = 0) const;
};

/// The task of `job`, its data read (a text tokenized, a BPE vocabulary
/// trained and saved in output_dir/tokenizer when the job asks). Throws
/// JobError for data it cannot train on.
Task makeTask(const Job &job);

struct Evaluation {
  double loss = 0, accuracy = 0;
  int64_t examples = 0;
};

/// The held-out loss and accuracy. In a world of several ranks, rank r
/// evaluates batches r, r + world, ... and the ranks gather every batch's
/// sums, which each adds in batch order: what every rank logs equals, to
/// the bit, what one process evaluating them all logs.
Evaluation evaluate(const Task &task, nn::Module &model, int64_t batchSize, int64_t limit);

/// Median step times of fresh models, compiled and eager, for the
/// throughput line: `steps` steps of each after one warm-up step each (the
/// compilation), interleaved (a compiled step, an eager step, ...), so that
/// a machine whose speed drifts, or which another program shares for a
/// while, slows both alike.
struct Throughput {
  double compiled = 0, eager = 0;
  /// Set when other processes wanted the cores meanwhile (CoreShare).
  std::optional<std::string> busy;
};
Throughput compareWithEager(const Task &task, int64_t batchSize, int64_t steps, uint64_t seed);

} // namespace sinter::tools

#endif // SINTER_TOOLS_TRAIN_TASK_H
