//===- Checkpoint.h - a training job's checkpoints and metrics rows -*- C++ -*-===//
//
// What --resume reads back: the checkpoint (parameters, optimizer state,
// where the run stands) and the metrics rows up to it. Both are readers of
// users' files, fuzzed (tests/fuzz/fuzz_checkpoint.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_CHECKPOINT_H
#define SINTER_TOOLS_CHECKPOINT_H

#include "Job.h"

#include "sinter/sinter.h"

#include <cstdint>
#include <string>

namespace sinter::tools {

/// Where a run stands: its step, and its epoch and batch in the epoch.
struct Position {
  int64_t step = 0, epoch = 0, batch = 0;
  /// Resumed from an artifact session's state (runtime::
  /// kSessionCheckpointFormat), not from a checkpoint of this job's own.
  bool fromSession = false;
};

/// What a checkpoint records of the data it was trained on, so that --resume
/// refuses other data of the same shapes.
std::string dataFingerprint(const data::Dataset &dataset);

/// Writes the checkpoint atomically. `state`: the optimizer's state_dict(),
/// which every rank takes (a sharded optimizer gathers it).
void saveCheckpoint(const std::string &path, const Job &job, int64_t batchSize, int64_t total,
                    nn::Module &model, const optim::Optimizer::State &state,
                    const optim::LRScheduler &schedule, const Position &at,
                    const std::string &data);

/// Restores a checkpoint (or an artifact session's state) into the model,
/// optimizer and schedule; returns where the run continues. Throws JobError
/// for a file that is not a checkpoint of this job, naming what differs.
Position loadCheckpoint(const std::string &path, const Job &job, int64_t batchSize, int64_t total,
                        int64_t perEpoch, nn::Module &model, optim::Optimizer &optimizer,
                        optim::LRScheduler &schedule, const std::string &data);

/// The rows of a metrics log (`text`, JSON lines) a job resumed at step
/// `keepUpTo` keeps: whole objects with an integer "step" up to it; a row
/// torn by a crash, or anything else, goes.
std::string keptMetricsRows(const std::string &text, int64_t keepUpTo);

} // namespace sinter::tools

#endif // SINTER_TOOLS_CHECKPOINT_H
