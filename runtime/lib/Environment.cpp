//===- Environment.cpp - every environment variable Sinter reads, once ----===//
#include "sinter/runtime/Environment.h"

#include "sinter/runtime/ByteCount.h"
#include "sinter/runtime/Device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sinter::runtime {

Environment parseEnvironment(const std::function<const char *(const char *)> &lookup) {
  Environment env;
  // The variable's value, or "" when unset.
  auto text = [&](const char *name) {
    const char *value = lookup(name);
    return std::string(value != nullptr ? value : "");
  };
  auto warn = [&](const char *name, const std::string &value, const char *expected) {
    env.warnings.push_back(std::string("sinter: warning: ") + name + "='" + value + "' is not " +
                           expected);
  };
  if (std::string device = text("SINTER_DEVICE"); !device.empty()) {
    if (!DeviceId::parse(device))
      warn("SINTER_DEVICE", device, "cpu, cuda or cuda:N; steps run on the CPU");
    else
      env.device = device;
  }
  if (const char *value = lookup("SINTER_COMPILER")) {
    std::string mode = value;
    if (mode != "1" && mode != "0" && mode != "reference")
      warn("SINTER_COMPILER", mode, "1 (compiled), 0 (eager) or reference; steps run compiled");
    env.compiler_enabled = mode != "0";
    env.use_reference = mode == "reference";
  }
  if (const char *value = lookup("SINTER_DEBUG")) {
    char *end = nullptr;
    long level = std::strtol(value, &end, 10);
    if (end == value || *end != '\0' || level < 0 || level > 4)
      warn("SINTER_DEBUG", value, "a level from 0 to 4");
    else
      env.debug = static_cast<int>(level);
  }
  env.dump_dir = text("SINTER_DUMP_DIR");
  if (std::string level = text("SINTER_CHECK_NUMERICS"); !level.empty()) {
    if (level != "0" && level != "1" && level != "2")
      warn("SINTER_CHECK_NUMERICS", level,
           "0 (off), 1 (NaN) or 2 (NaN and infinities); numerics are not checked");
    else
      env.check_numerics = level[0] - '0';
  }
  auto bytes = [&](const char *name, int64_t &into, const char *otherwise) {
    std::string value = text(name);
    if (value.empty())
      return;
    int64_t parsed = parseByteCount(value);
    if (parsed < 0)
      warn(name, value,
           (std::string("a number of bytes (optionally with KiB, MiB or GiB); ") + otherwise)
               .c_str());
    else
      into = parsed;
  };
  bytes("SINTER_MEMORY_BUDGET", env.memory_budget, "no budget");
  bytes("SINTER_MEMORY_LIMIT", env.memory_limit, "ignored");
  // 1 or 0, else `expected` is said.
  auto flag = [&](const char *name, bool &into, const char *expected) {
    std::string value = text(name);
    if (value.empty())
      return;
    if (value != "0" && value != "1")
      warn(name, value, expected);
    else
      into = value == "1";
  };
  flag("SINTER_MEMORY_BUDGET_HARD", env.memory_budget_hard,
       "1 (a step over the budget is refused) or 0; steps may run over it");
  flag("SINTER_ALLOW_FALLBACK", env.allow_fallback,
       "1 (allowed) or 0 (an error); fallbacks are allowed");
  flag("SINTER_ALLOW_TF32", env.allow_tf32,
       "1 (matrix products on a GPU may use TF32) or 0; products compute in f32");
  env.cache_dir = text("SINTER_CACHE_DIR");
  env.kernels_dir = text("SINTER_KERNELS_DIR");
  env.cxx = text("CXX");
  env.onednn_max_cpu_isa = text("ONEDNN_MAX_CPU_ISA");
  if (env.onednn_max_cpu_isa.empty())
    env.onednn_max_cpu_isa = text("DNNL_MAX_CPU_ISA");
  if (std::string profile = text("SINTER_PROFILE"); !profile.empty() && profile != "0")
    env.profile = profile == "1" ? "-" : profile;
  env.adaptive_threads = text("SINTER_ADAPTIVE_THREADS") != "0";
  env.cuda_driver = text("SINTER_CUDA_DRIVER");
  env.nvrtc_library = text("SINTER_NVRTC");
  env.cublas_library = text("SINTER_CUBLAS");
  flag("SINTER_CUDA_SYNC", env.cuda_sync,
       "1 (every CUDA launch waited for, so a fault names its kernel) or 0; launches are not "
       "waited for");
  if (std::string simulator = text("SINTER_CUDA_SIMULATOR"); !simulator.empty()) {
    if (simulator != "0" && simulator != "1" && simulator != "shuffled")
      warn("SINTER_CUDA_SIMULATOR", simulator,
           "0 (off), 1 (CUDA devices are the simulator) or shuffled (and every launch in its "
           "checking mode); the simulator is off");
    else
      env.cuda_simulator = simulator != "0", env.cuda_simulator_shuffled = simulator == "shuffled";
  }
  env.socket_ifname = text("SINTER_SOCKET_IFNAME");
  // A number above 0 and at most `most`, else `expected` is said.
  auto positive = [&](const char *name, double most, double &into, const char *expected) {
    std::string value = text(name);
    if (value.empty())
      return;
    char *end = nullptr;
    double parsed = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !(parsed > 0) || parsed > most)
      warn(name, value, expected);
    else
      into = parsed;
  };
  positive("SINTER_COLLECTIVE_TIMEOUT", 86400, env.collective_timeout_s,
           "a number of seconds above 0 and at most 86400; collectives time out after 300 s");
  positive("SINTER_FIRST_BUCKET_MB", 1 << 20, env.first_bucket_mb,
           "a number of MiB above 0; the first bucket is 1 MiB");
  positive("SINTER_BUCKET_MB", 1 << 20, env.bucket_mb,
           "a number of MiB above 0; buckets are 25 MiB");
  if (std::string inFlight = text("SINTER_BUCKETS_IN_FLIGHT"); !inFlight.empty()) {
    char *end = nullptr;
    long parsed = std::strtol(inFlight.c_str(), &end, 10);
    if (end == inFlight.c_str() || *end != '\0' || parsed < 0 || parsed > 1024)
      warn("SINTER_BUCKETS_IN_FLIGHT", inFlight,
           "a count from 0 (each bucket waited for at once) to 1024; 2 are in flight");
    else
      env.buckets_in_flight = static_cast<int>(parsed);
  }
  bytes("SINTER_TEST_WRITE_LIMIT", env.test_write_limit, "no limit");
  if (std::string kill = text("SINTER_TEST_KILL_BEFORE_RENAME"); !kill.empty()) {
    char *end = nullptr;
    long long parsed = std::strtoll(kill.c_str(), &end, 10);
    if (end == kill.c_str() || *end != '\0' || parsed < 0)
      warn("SINTER_TEST_KILL_BEFORE_RENAME", kill, "a count of atomic writes; never");
    else
      env.test_kill_before_rename = parsed;
  }
  flag("SINTER_DETERMINISTIC_COLLECTIVES", env.deterministic_collectives,
       "1 (reductions in rank order) or 0; reductions follow Gloo's ring");
  return env;
}

const Environment &environment() {
  static const Environment *env = [] {
    auto *parsed =
        new Environment(parseEnvironment([](const char *name) { return std::getenv(name); }));
    for (const std::string &warning : parsed->warnings)
      std::fprintf(stderr, "%s\n", warning.c_str());
    return parsed;
  }();
  return *env;
}

} // namespace sinter::runtime
