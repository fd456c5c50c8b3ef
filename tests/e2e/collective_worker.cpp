//===- collective_worker.cpp - a worker for the launcher's tests ----------===//
//
// Joins the world its launcher describes (sinter-run, torchrun, srun,
// mpirun: Note [Finding the world]) and runs `--steps` all-reduces whose
// result every rank can check: at step s, rank r contributes r + s + 1 in
// every element, and the sum over a world of n is n(n+1)/2 + n*s. It keeps a
// running total in a checkpoint (--checkpoint DIR, one file per rank,
// written atomically after each step) and resumes from it after a restart.
// Faults on demand, for the launcher's failure tests: --kill-rank R
// --at-step S (SIGKILL itself), --stop (SIGSTOP instead), --exit-code C (exit
// instead), each only in the first run unless --every-run.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Files.h"
#include "sinter/runtime/ProcessGroup.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace sinter::runtime;
using sinter::Status;

int main(int argc, char **argv) {
  CLI::App app{"A data-parallel worker for the launcher's tests"};
  int steps = 5;
  int faultRank = -1;
  int faultStep = 0;
  bool stop = false;
  int exitCode = 0;
  bool everyRun = false;
  int sleepMs = 0;
  std::string checkpoint;
  app.add_option("--steps", steps);
  app.add_option("--kill-rank", faultRank);
  app.add_option("--at-step", faultStep);
  app.add_flag("--stop", stop);
  app.add_option("--exit-code", exitCode);
  app.add_flag("--every-run", everyRun);
  app.add_option("--sleep-ms", sleepMs);
  app.add_option("--checkpoint", checkpoint);
  CLI11_PARSE(app, argc, argv);

  auto world = worldFromEnvironment([](const char *name) { return std::getenv(name); });
  if (!world.ok()) {
    std::fprintf(stderr, "collective_worker: %s\n", std::string(world.status().message()).c_str());
    return 2;
  }
  auto group = startProcessGroup(*world, processGroupOptionsFromEnvironment());
  if (!group.ok()) {
    std::fprintf(stderr, "collective_worker: %s\n", std::string(group.status().message()).c_str());
    return 1;
  }
  Communicator &comm = *(*group)->communicator;
  int rank = comm.rank();
  int size = comm.size();
  std::printf("joined as rank %d of %d (%s, restart %d, local rank %d of %d, OMP_NUM_THREADS=%s)\n",
              rank, size, world->launcher.c_str(), world->restart, world->localRank,
              world->localSize,
              std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "");
  std::fflush(stdout);

  int first = 0;
  double total = 0;
  std::string file = checkpoint + "/rank" + std::to_string(rank);
  if (!checkpoint.empty()) {
    if (auto saved = readWholeFile(file, "collective_worker"); saved.ok())
      std::sscanf(saved->c_str(), "%d %lf", &first, &total);
    if (first > 0)
      std::printf("resumed at step %d\n", first);
  }
  std::vector<float> values(100000);
  for (int step = first; step < steps; ++step) {
    if (rank == faultRank && step == faultStep && (everyRun || world->restart == 0)) {
      std::printf("failing at step %d\n", step);
      std::fflush(stdout);
      if (exitCode != 0)
        return exitCode;
      std::raise(stop ? SIGSTOP : SIGKILL);
    }
    std::fill(values.begin(), values.end(), float(rank + step + 1));
    Status status =
        comm.wait(comm.allReduce(values.data(), int64_t(values.size()), ElementType::F32,
                                 ReduceOp::Sum, "all_reduce at step " + std::to_string(step)));
    if (!status.ok()) {
      std::fprintf(stderr, "collective_worker: %s\n", std::string(status.message()).c_str());
      return 1;
    }
    float expected = float(size * (size + 1) / 2 + size * step);
    for (float value : values)
      if (value != expected) {
        std::fprintf(stderr, "collective_worker: step %d: %g, expected %g\n", step, value,
                     expected);
        return 1;
      }
    total += values[0];
    if (!checkpoint.empty()) {
      std::string text = std::to_string(step + 1) + " " + std::to_string(total);
      if (Status saved = writeFileAtomically(file, {text}, "collective_worker"); !saved.ok())
        return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
  }
  std::printf("total %.1f after %d steps\n", total, steps);
  return 0;
}
