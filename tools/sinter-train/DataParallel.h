//===- DataParallel.h - a job's workers and its process group -------------===//
#ifndef SINTER_TOOLS_DATAPARALLEL_H
#define SINTER_TOOLS_DATAPARALLEL_H

#include "Job.h"

#include <optional>
#include <string>
#include <vector>

namespace sinter::tools {

/// Note [Data-parallel jobs] in DataParallel.cpp. For a job with
/// distribution enabled: a process that no launcher started, with more than
/// one worker per host, becomes `sinter-run --standalone` over `command`
/// (this process's own command line) and returns only when that cannot
/// start (its exit status); a worker (or a world of one) joins the process
/// group (`join`; a training program joins its own) and returns nothing,
/// and the job trains. Throws JobError for a world that is not the one the
/// job asks for.
std::optional<int> startDataParallel(const Job &job, const std::vector<std::string> &command,
                                     bool join);

} // namespace sinter::tools

#endif // SINTER_TOOLS_DATAPARALLEL_H
