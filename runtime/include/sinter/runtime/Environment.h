//===- Environment.h - every environment variable Sinter reads, once ------===//
//
// Note [The environment, read once]
// Sinter's environment variables are read in one place, once: the first call
// of environment() (in practice the process's first tensor op, compiled step
// or tool start) parses every one of them, prints a warning for each value
// that is none of its forms (and then uses the default), and keeps the
// result for the life of the process. Nothing else calls getenv for them.
// A program that wants other settings sets them in code: a step's through
// the sinter::Session it runs under (Note [Sessions] in sinter/Session.h;
// Settings::fromEnvironment() starts from here), the kernel cache's folder
// through codegen::setKernelCacheDir. The README's
// "Environment variables" table lists them all. Other libraries' variables
// stay theirs: OpenMP reads OMP_* and GOMP_* itself (the runtime only sets
// GOMP_SPINCOUNT when the user set neither it nor OMP_WAIT_POLICY), and
// oneDNN its ISA cap, which the compiler mirrors (Note [Which library
// multiplies]). A process started by sinter-train gets its job's settings
// through these variables.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_ENVIRONMENT_H
#define SINTER_RUNTIME_ENVIRONMENT_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sinter::runtime {

struct Environment {
  // A session's settings: the defaults of Settings::fromEnvironment().
  /// SINTER_DEVICE: "cpu", "cuda" or "cuda:N"; empty: the CPU.
  std::string device;
  bool compiler_enabled = true;    ///< SINTER_COMPILER: 1 (compiled), 0 (eager)
  bool use_reference = false;      ///< SINTER_COMPILER=reference
  int debug = 0;                   ///< SINTER_DEBUG: 0 to 4
  std::string dump_dir;            ///< SINTER_DUMP_DIR
  int check_numerics = 0;          ///< SINTER_CHECK_NUMERICS: 0, 1 (NaN), 2 (and infinities)
  int64_t memory_budget = 0;       ///< SINTER_MEMORY_BUDGET: bytes, 0 for none
  bool memory_budget_hard = false; ///< SINTER_MEMORY_BUDGET_HARD: 1 (refuse a step over it)
  int64_t memory_limit = 0;        ///< SINTER_MEMORY_LIMIT: bytes, 0 for the system's
  bool allow_fallback = true;      ///< SINTER_ALLOW_FALLBACK: 1 (allowed), 0 (an error)
  bool allow_tf32 = false;         ///< SINTER_ALLOW_TF32: 1 (GPU products may use TF32), 0
  // Where the compiler finds and keeps things.
  std::string cache_dir;   ///< SINTER_CACHE_DIR; empty: ~/.cache/sinter
  std::string kernels_dir; ///< SINTER_KERNELS_DIR; empty: beside the library
  std::string cxx;         ///< CXX: the host C++ compiler; empty: c++ on PATH
  /// ONEDNN_MAX_CPU_ISA, else DNNL_MAX_CPU_ISA (oneDNN's own, mirrored).
  std::string onednn_max_cpu_isa;
  // The runtime's.
  std::string profile;          ///< SINTER_PROFILE: "" (off), "-" (stderr) or a file
  bool adaptive_threads = true; ///< SINTER_ADAPTIVE_THREADS=0 turns it off
  std::string cuda_driver;      ///< SINTER_CUDA_DRIVER; empty: libcuda.so.1
  std::string nvrtc_library;    ///< SINTER_NVRTC; empty: libnvrtc.so.13 and others
  std::string cublas_library;   ///< SINTER_CUBLAS; empty: libcublas.so.13
  /// SINTER_CUDA_SYNC=1: every launch on a GPU waited for (Note [The
  /// driver's device] in runtime/lib/DriverDevice.cpp).
  bool cuda_sync = false;
  /// SINTER_CUDA_SIMULATOR: 1 (CUDA devices are the simulator), "shuffled"
  /// (and each launch in its shuffled checking mode); 0 or empty: off.
  bool cuda_simulator = false;
  bool cuda_simulator_shuffled = false;
  // Data parallelism (Note [The communicator] in sinter/runtime/Communicator.h).
  /// SINTER_SOCKET_IFNAME: the interface collectives bind to; empty: the
  /// one that routes to the master.
  std::string socket_ifname;
  /// SINTER_COLLECTIVE_TIMEOUT: seconds a collective may take (300).
  double collective_timeout_s = 300;
  /// SINTER_DETERMINISTIC_COLLECTIVES=1: reductions in rank order.
  bool deterministic_collectives = false;
  /// SINTER_FIRST_BUCKET_MB, SINTER_BUCKET_MB: the gradient buckets' sizes
  /// in MiB (1 and 25: Note [Gradient buckets] in sinter/Passes/Buckets.h);
  /// SINTER_BUCKETS_IN_FLIGHT: buckets started and not waited for (2; 0:
  /// each waited for at once).
  double first_bucket_mb = 1, bucket_mb = 25;
  int buckets_in_flight = 2;
  // Faults for tests (Note [Faults for tests] in runtime/lib/Files.cpp).
  /// SINTER_TEST_WRITE_LIMIT: bytes the process's atomic writes may write in
  /// all before they fail as on a full disk; 0: no limit.
  int64_t test_write_limit = 0;
  /// SINTER_TEST_KILL_BEFORE_RENAME=N: the process kills itself (SIGKILL)
  /// in its N-th atomic write, its temporary whole and not yet renamed; 0:
  /// never.
  int64_t test_kill_before_rename = 0;
  /// One line per value that is none of its variable's forms, as printed.
  std::vector<std::string> warnings;
};

/// The environment as `lookup` (getenv's shape: null when unset) gives it;
/// what environment() parses, for tests.
Environment parseEnvironment(const std::function<const char *(const char *)> &lookup);

/// The process's environment, parsed at the first call (its warnings go to
/// stderr then, once) and the same for the life of the process.
const Environment &environment();

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_ENVIRONMENT_H
