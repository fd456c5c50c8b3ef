//===- Train.h - running a training job ------------------------*- C++ -*-===//
#ifndef SINTER_TOOLS_TRAIN_H
#define SINTER_TOOLS_TRAIN_H

#include "Job.h"

#include <string>
#include <vector>

namespace sinter::tools {

struct RunOptions {
  /// Continue from `checkpoint` (default: the job's output_dir/checkpoint.safetensors).
  bool resume = false;
  std::string checkpoint;
  /// Stop after this step with a checkpoint, as an interrupted run would
  /// (0: run to the end).
  int64_t stop_at = 0;
  /// Where the steps run (--device: cpu, cuda or cuda:N); empty: cuda:0
  /// for a job with n_gpus 1, else SINTER_DEVICE, else the CPU.
  std::string device;
  /// This process's command line, for the workers of a data-parallel job
  /// that starts its own (Note [Data-parallel jobs] in DataParallel.cpp).
  std::vector<std::string> command;
};

/// Runs `job`: a zoo model's training loop, or the user's program. Returns
/// the exit status; throws JobError or sinter::Error for what prevents the
/// job from starting (bad data, a checkpoint of another job).
int runJob(const Job &job, const RunOptions &options);

} // namespace sinter::tools

#endif // SINTER_TOOLS_TRAIN_H
