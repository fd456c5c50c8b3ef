//===- UserProgram.h - a job that runs the user's program -----*- C++ -*-===//
#ifndef SINTER_TOOLS_TRAIN_USERPROGRAM_H
#define SINTER_TOOLS_TRAIN_USERPROGRAM_H

#include "Job.h"

#include <string>

namespace sinter::tools {

/// Runs the user's training program with the job in its environment
/// (SINTER_JOB: the resolved job as JSON; SINTER_HYPERPARAMETERS;
/// SINTER_OUTPUT_DIR; SINTER_DATASET; and the job's compiler settings as
/// runJob gives them to its own session: SINTER_COMPILER, SINTER_MEMORY_BUDGET,
/// SINTER_ALLOW_FALLBACK, with debug SINTER_DEBUG and SINTER_DUMP_DIR, with
/// checked numerics SINTER_CHECK_NUMERICS at least 1, SINTER_DEVICE when the
/// job names a device (--device, n_gpus 1); the rest of the
/// environment as it is) and each hyperparameter as `--key value`
/// arguments, as managed jobs pass them.
/// Returns its exit status (128 + the signal that killed it).
int launchProgram(const Job &job, const std::string &device);

} // namespace sinter::tools

#endif // SINTER_TOOLS_TRAIN_USERPROGRAM_H
