//===- DataParallel.cpp - a job's workers and its process group -----------===//
//
// Note [Data-parallel jobs]
// A job with distribution enabled trains on instance_count machines with
// processes_per_host workers each, as the managed service's
// `distribution={'pytorchxla': {'enabled': True}}` jobs did:
//  - started by hand on one machine, sinter-train starts its own workers:
//    it becomes `sinter-run --standalone --nproc-per-node P sinter-train
//    ARGS...` (Note [The node agent] in tools/sinter-run), so a failed worker
//    stops the job with its rank and reason;
//  - started under sinter-run, torchrun, srun or mpirun (a rank in the
//    environment: Note [Finding the world]), it is one worker and starts
//    none; the world must be instance_count x processes_per_host, or the job
//    says what it found;
//  - several machines without a launcher are refused with the command to run.
// Each worker trains on its shard of every global batch (DataLoader's rank
// and world_size; the job's batch_size is per worker, as the service's was),
// averages the gradients over the ranks in the step (reduce_gradients), and
// logs the loss averaged over the ranks: what one process with the global
// batch would log. Rank 0 writes the checkpoints, the metrics and the
// summary. Each rank evaluates every world-th batch of the held-out set and
// the ranks gather each batch's sums, which every rank adds in batch order:
// the evaluation one process would log, to the bit, in 1/world of its time.
// With zero_stage 1 the optimizer reduces the gradients itself and each
// rank keeps 1/world of AdamW's state (Note [Sharded optimizer state] in
// sinter/optim/Optimizer.h); every rank then takes part in gathering the
// state for a checkpoint. The learning-rate rule uses the real world size.
// With gradient_accumulation_steps K, each worker runs K micro-batches a
// step, each its own compiled step that adds to the gradients; only the
// last reduces them over the ranks and updates (as PyTorch/XLA's loops do),
// so a step's memory is one micro-batch's and the collectives run once a
// step. A worker that its launcher restarts (sinter-run --max-restarts,
// torchrun) resumes from the job's checkpoint by itself.
//
//===----------------------------------------------------------------------===//
#include "DataParallel.h"

#include "sinter/runtime/World.h"
#include "sinter/sinter.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sinter::tools {

namespace {

/// sinter-run beside this program: in the build tree
/// (tools/sinter-train/sinter-train, tools/sinter-run/sinter-run), or
/// installed in one bin/; else the PATH's.
std::string sinterRunPath() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const std::filesystem::path &candidate :
         {self.parent_path() / "sinter-run",
          self.parent_path().parent_path() / "sinter-run" / "sinter-run"})
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate.string();
  }
  return "sinter-run";
}

} // namespace

std::optional<int> startDataParallel(const Job &job, const std::vector<std::string> &command,
                                     bool join) {
  if (!job.distribution_enabled)
    return std::nullopt;
  StatusOr<runtime::World> world =
      runtime::worldFromEnvironment([](const char *name) { return std::getenv(name); });
  if (!world.ok())
    throw JobError("distribution", std::string(world.status().message()));
  int64_t asked = job.instance_count * job.processes_per_host;
  if (world->launcher.empty()) {
    if (job.instance_count > 1)
      throw JobError("instance_count",
                     "is " + std::to_string(job.instance_count) +
                         " and this process was started by no launcher: start one sinter-run per "
                         "machine: sinter-run --nnodes " +
                         std::to_string(job.instance_count) +
                         " --node-rank N --master-addr ADDRESS_OF_NODE_0 --nproc-per-node " +
                         std::to_string(job.processes_per_host) + " sinter-train ...");
    if (job.processes_per_host > 1) {
      std::vector<std::string> args = {sinterRunPath(), "--standalone", "--nproc-per-node",
                                       std::to_string(job.processes_per_host)};
      args.insert(args.end(), command.begin(), command.end());
      std::printf("starting %lld workers: %s --standalone --nproc-per-node %lld ...\n",
                  static_cast<long long>(job.processes_per_host), args[0].c_str(),
                  static_cast<long long>(job.processes_per_host));
      std::fflush(stdout);
      std::vector<char *> argv;
      for (std::string &arg : args)
        argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::fprintf(stderr, "sinter-train: cannot start %s: %s\n", argv[0], std::strerror(errno));
      return 1;
    }
  } else if (world->size != asked) {
    throw JobError("distribution",
                   "this process is rank " + std::to_string(world->rank) + " of a world of " +
                       std::to_string(world->size) + " (started by " + world->launcher +
                       "), but the job asks for instance_count x processes_per_host = " +
                       std::to_string(job.instance_count) + " x " +
                       std::to_string(job.processes_per_host) + " = " + std::to_string(asked));
  }
  if (join)
    distributed::init_process_group();
  return std::nullopt;
}

} // namespace sinter::tools
