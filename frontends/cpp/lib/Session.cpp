//===- Session.cpp - the settings a program runs with, held by a session --===//
//
// Note [Sessions] in sinter/Session.h. A session's steps run in Step.cpp.
//
//===----------------------------------------------------------------------===//
#include "sinter/Session.h"

#include "sinter/Error.h"
#include "sinter/runtime/Environment.h"

#include "Format.h"

#include <cstdio>
#include <cstdlib>

namespace sinter {
namespace {

/// The calling thread's innermost live Session::Use, or null.
thread_local const Session *currentSession = nullptr;

} // namespace

Settings Settings::fromEnvironment() {
  const runtime::Environment &env = runtime::environment();
  Settings settings;
  if (!env.device.empty())
    settings.device = Device::parse(env.device);
  CompilerConfig &config = settings.compiler;
  config.enabled = env.compiler_enabled;
  config.use_reference = env.use_reference;
  config.debug = env.debug;
  config.dump_dir = env.dump_dir;
  config.check_numerics = env.check_numerics;
  config.memory_budget = env.memory_budget;
  config.memory_budget_hard = env.memory_budget_hard;
  config.memory_limit = env.memory_limit;
  config.allow_fallback = env.allow_fallback;
  config.allow_tf32 = env.allow_tf32;
  return settings;
}

Session::Session(Settings settings, std::source_location where) : settings_(std::move(settings)) {
  const CompilerConfig &config = settings_.compiler;
  SINTER_CHECK(config.memory_budget >= 0, where,
               cat("Settings::compiler.memory_budget is ", config.memory_budget,
                   " bytes; it must be 0 (no budget) or positive"));
  SINTER_CHECK(!config.memory_budget_hard || config.memory_budget > 0, where,
               "Settings::compiler.memory_budget_hard is set without a memory_budget: give the "
               "budget (bytes) it makes a hard limit");
  SINTER_CHECK(config.memory_limit >= 0, where,
               cat("Settings::compiler.memory_limit is ", config.memory_limit,
                   " bytes; it must be 0 (the system's available memory) or positive"));
  SINTER_CHECK(config.check_numerics >= 0 && config.check_numerics <= 2, where,
               cat("Settings::compiler.check_numerics is ", config.check_numerics,
                   "; it must be 0 (off), 1 (NaN) or 2 (NaN and infinities)"));
  SINTER_CHECK(config.check_numerics == 0 || !config.use_reference, where,
               cat("Settings::compiler.check_numerics is ", config.check_numerics,
                   " but steps run on the reference executor (use_reference, "
                   "SINTER_COMPILER=reference), which checks no numerics; check them compiled "
                   "or eagerly, or turn one off"));
  SINTER_CHECK(
      config.debug >= 0 && config.debug <= 4, where,
      cat("Settings::compiler.debug is ", config.debug, "; it must be a level from 0 to 4"));
  SINTER_CHECK(config.cpu == "native" || config.cpu == "x86-64" || config.cpu == "x86-64-v2" ||
                   config.cpu == "x86-64-v3" || config.cpu == "x86-64-v4",
               where,
               cat("Settings::compiler.cpu is '", config.cpu,
                   "'; it must be native or an x86-64 level (x86-64, x86-64-v2, x86-64-v3, "
                   "x86-64-v4)"));
  if (settings_.device.isCuda()) {
    SINTER_CHECK(config.check_numerics == 0, where,
                 cat("Settings::compiler.check_numerics is ", config.check_numerics,
                     " but numerics are checked on the CPU only yet (the device is ",
                     settings_.device.toString(),
                     "); run the step on Device::cpu() to find the "
                     "first kernel that makes a NaN"));
    // A GPU the driver reports, or the simulator's cuda:0 (Note [The CUDA
    // simulator as a device] in Device.cpp); else the driver's reason.
    try {
      settings_.device.ensureAvailable(where);
    } catch (const Error &error) {
      throwError(cat("Settings::device is ", settings_.device.toString(),
                     " (SINTER_DEVICE, a tool's --device, or code): ", error.message(),
                     runtime::environment().cuda_simulator
                         ? std::string()
                         : "; use Device::cpu(), or SINTER_CUDA_SIMULATOR=1 to run CUDA steps "
                           "on the CUDA simulator"),
                 where);
    }
  }
}

const Session &Session::current(std::source_location where) {
  if (currentSession != nullptr)
    return *currentSession;
  // Made once, at the first call that succeeds (an environment it refuses
  // throws at each call); never destroyed, so that a tensor made or read
  // while static objects are destroyed still finds it.
  static const Session *defaults = new Session(Settings::fromEnvironment(), where);
  return *defaults;
}

Session::Use::Use(Session session) : session_(std::move(session)), previous_(currentSession) {
  currentSession = &session_;
}

Session::Use::Use(Settings settings, std::source_location where)
    : Use(Session(std::move(settings), where)) {}

Session::Use::~Use() {
  // Uses end in the reverse order they began, on their own thread (they are
  // scopes); anything else would leave a freed session current.
  if (currentSession != &session_) {
    std::fprintf(stderr, "sinter: a Session::Use ended while it was not its thread's current "
                         "session (Uses are scopes: each ends on its thread, innermost first)\n");
    std::abort();
  }
  currentSession = previous_;
}

} // namespace sinter
