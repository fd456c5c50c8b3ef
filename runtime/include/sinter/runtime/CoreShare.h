//===- CoreShare.h - how many threads a kernel may use on a shared machine ===//
//
// Note [Sharing the cores]: a parallel kernel is a fork and a join. When
// another process wants one of the cores, the scheduler deschedules one of
// the team's threads for a time slice (milliseconds), and every other thread
// of the team waits for it at the join: on a 2-core machine with one other
// process spinning, gpt-mini's compiled step took 3.3x as long on 2 threads
// (276 -> 905 ms) but no longer on 1 thread (512 -> 496 ms), and mlp's 9x
// (0.72 -> 6.66 ms) against none (0.83 -> 0.73 ms). So before each run the
// executable sizes the OpenMP team to the cores nobody else wants: the
// cores this process may use (its affinity mask, capped by a cgroup CPU
// quota) less the other processes' runnable threads (the kernel's count of
// runnable threads, /proc/loadavg, less this process's own, from
// /proc/self/task), smoothed over the last samples (one every 5 ms of
// runs at most, about 20 us each). The team only shrinks below the caller's
// thread count (OMP_NUM_THREADS, `--threads`, omp_set_num_threads), never
// grows past it, and changes only when the estimate is more than 0.6 of a
// core away from it, so a machine at the edge does not flip the team at
// every sample. SINTER_ADAPTIVE_THREADS=0 turns it off: generated kernels
// compute the same bits on any team, but a library product may not (oneDNN
// may split the summed dimension across its threads), so runs compared to
// the bit across processes on a shared machine (a resumed job against an
// uninterrupted one) want a fixed team.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_CORESHARE_H
#define SINTER_RUNTIME_CORESHARE_H

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

namespace sinter::runtime {

/// The cores this process may run on: the CPUs in its affinity mask, capped
/// by its cgroup's CPU quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`),
/// rounded up; at least 1.
int usableCores();

/// The team for the next run: `current` (the team now) moved to the
/// nearest whole number of free cores (`usable - others`) when that is more
/// than 0.6 of a core away, and kept within [1, configured].
/// REQUIRES: configured >= 1, current in [1, configured].
int teamFor(int current, int configured, double usable, double others);

/// Other processes' runnable threads now: `runnable` (the machine's count,
/// which includes this process's) less `own` (this process's), scaled to
/// the share of the machine's `online` CPUs that this process may use.
double othersOf(int runnable, int own, int usable, int online);

/// One process's view of how busy the machine is, shared by every
/// executable (Note [Sharing the cores]).
class CoreShare {
public:
  static CoreShare &get();

  /// The team for a run whose caller would use `configured` threads:
  /// samples the machine when the last sample is 5 ms old or more.
  int team(int configured);

  /// The cores this process may use.
  int usable() const { return usable_; }
  /// Whether teams are sized (SINTER_ADAPTIVE_THREADS is not 0).
  bool adaptive() const { return adaptive_; }

  /// What the samples saw so far: their count, the sum of other processes'
  /// runnable threads over them, and the runs given fewer threads than
  /// their caller's. Two tallies' difference describes the time between.
  struct Tally {
    long samples = 0;
    double others = 0;
    long shrunkRuns = 0;
  };
  Tally tally() const;

  /// "the machine was busy: other processes kept 1.2 threads runnable on
  /// average (this process may use 2 cores)" when the samples between the
  /// two tallies saw a quarter of a core's worth or more, else nothing: for
  /// a timing printed to a user.
  std::optional<std::string> busyNote(const Tally &before, const Tally &after) const;

private:
  CoreShare();
  void sample(std::chrono::steady_clock::time_point now);

  bool adaptive_ = true;
  int usable_ = 1;
  int online_ = 1;
  mutable std::mutex mutex_;
  bool sampled_ = false;
  std::chrono::steady_clock::time_point last_{};
  double others_ = 0; // smoothed
  int team_ = 0;      // 0: not decided yet
  Tally tally_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_CORESHARE_H
