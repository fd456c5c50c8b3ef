//===- ZooArtifact.h - a zoo model's training step as an artifact -*- C++ -*-===//
//
// What sinter-compile writes for a zoo model: its steady training step
// (AdamW, the moments as state from the first step on) and its prediction
// function, exported (sinter/Aot.h) and written as an artifact
// (Note [Artifacts] in sinter/runtime/Artifact.h) with the model's initial
// weights and zero moments.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_ZOOARTIFACT_H
#define SINTER_TOOLS_ZOOARTIFACT_H

#include "sinter/sinter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinter::tools {

struct ZooArtifactOptions {
  std::string model;
  int64_t batch = 0;
  /// Tokens per sequence (gpt-mini, bert-mini).
  int64_t length = 64;
  double learning_rate = 1e-3;
  double weight_decay = 0.01;
  runtime::Schedule schedule; // baseLr is learning_rate
  std::string cpu = "x86-64-v3";
  int64_t memory_budget = 0;
  uint64_t seed = 0;
  /// gpt-mini, bert-mini: the dropout of the training step (its masks drawn
  /// from random keys of the step count; Note [Random keys across steps]).
  double dropout = 0;
  bool keep_sources = false;
  /// Empty: the CPU's kernels. Else the step is recorded on cuda:0 (the
  /// CUDA simulator or a GPU must stand for it) and built for these GPU
  /// architectures (Note [CUDA artifacts] in sinter/runtime/Artifact.h).
  std::vector<std::string> cuda_architectures = {};
};

/// The model's training step and prediction as ArtifactContents: the train
/// step's batch inputs are "input" and "target", its output "loss";
/// predict takes "input" and returns "logits". The state is named as
/// sinter-train's checkpoints name it ("model.<parameter>",
/// "optimizer.<i>.exp_avg", "optimizer.<i>.exp_avg_sq"). Throws
/// sinter::Error.
aot::ArtifactContents zooArtifact(const ZooArtifactOptions &options);

} // namespace sinter::tools

#endif // SINTER_TOOLS_ZOOARTIFACT_H
