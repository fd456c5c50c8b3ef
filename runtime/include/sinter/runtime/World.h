//===- World.h - which rank this process is, from its launcher -*- C++ -*-===//
//
// Note [Finding the world]
// A data-parallel process learns its rank, the world's size and where the
// rendezvous store is from whoever started it, each launcher with its own
// variables, read in this order:
//   sinter-run and torchrun: RANK, WORLD_SIZE, LOCAL_RANK,
//     LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT (sinter-run
//     also SINTER_RUN_ID, SINTER_RESTART and SINTER_STORE_HOSTED=1: its
//     node agent hosts the store at MASTER_ADDR:MASTER_PORT; torchrun:
//     TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT);
//   srun: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, the local
//     task count from SLURM_TASKS_PER_NODE or SLURM_NTASKS_PER_NODE, the
//     first host of SLURM_JOB_NODELIST as the master (MASTER_ADDR wins),
//     SLURM_JOB_ID as the run id;
//   mpirun (Open MPI): OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK,
//     _LOCAL_SIZE, _NODE_RANK; PMIx alone: PMIX_RANK with WORLD_SIZE. The
//     master is MASTER_ADDR, or this machine when every rank is local.
// None of them: a world of one. MASTER_PORT defaults to 29500, as
// torchrun's. Where no agent hosts the store (all but sinter-run), rank 0
// hosts it at MASTER_PORT, except under torchrun, whose own store (another
// protocol) holds MASTER_PORT: there rank 0 hosts it at MASTER_PORT + 1.
// A value that is not a number, a rank outside the world, or a master
// that cannot be known is refused with the variable's name.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_WORLD_H
#define SINTER_RUNTIME_WORLD_H

#include "sinter/runtime/Status.h"

#include <functional>
#include <string>
#include <string_view>

namespace sinter::runtime {

struct World {
  int rank = 0;
  int size = 1;
  int localRank = 0;
  int localSize = 1;
  /// The node's index (GROUP_RANK, SLURM_NODEID).
  int nodeRank = 0;
  std::string masterAddress = "127.0.0.1";
  /// Where the rendezvous store listens.
  int storePort = 29500;
  /// "sinter-run", "torchrun", "srun", "mpirun", or "" (a world of one).
  std::string launcher = {};
  /// Keys in the store are prefixed by the run id and the restart.
  std::string runId = {};
  int restart = 0;
  /// Whether this process hosts the store (rank 0, unless sinter-run's
  /// agent does).
  bool hostsStore = false;
};

/// The world as `lookup` (getenv's shape: null when unset) describes it.
StatusOr<World> worldFromEnvironment(const std::function<const char *(const char *)> &lookup);
/// The first host of a Slurm host list: "node[03-05,7],gpu1" gives "node03".
StatusOr<std::string> firstSlurmHost(std::string_view list);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_WORLD_H
