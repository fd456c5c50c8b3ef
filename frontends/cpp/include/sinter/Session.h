//===- Session.h - the settings a program runs with, held by a session ----===//
//
// Note [Sessions]
// Every setting a step runs with (the device, whether steps compile, debug
// dumps, the memory budget and limit, checked numerics, fallbacks, the
// process group of a data-parallel step) is one plain value,
// sinter::Settings, held by a sinter::Session. Nothing else holds settings:
// there is no process-wide configuration to change behind a caller's back.
//  - session.mark_step() and session.plan_step() run the pending step with
//    that session's settings, whatever is current.
//  - mark_step(), plan_step() and a read of a pending tensor (item,
//    to_vector, printing) use the current session of the calling thread:
//    the innermost live Session::Use on it, else the process's default
//    session, whose settings come from the environment (Note [The
//    environment, read once] in sinter/runtime/Environment.h; the README's
//    table). New tensors are made on the current session's device.
//  - A Session::Use is a scope, as torch.device(...) or jax.default_device
//    are: it makes its session current on its own thread until it ends,
//    and the one before it current again. Other threads keep theirs (a
//    Use at namespace scope covers only the thread that made it). Uses end
//    innermost first on their own thread; one that does not aborts.
//  - What a step computes is not a session's: mark_step() computes every
//    pending tensor of the process, as before, with one session's settings.
//  - Settings{...} starts from the built-in defaults; start from
//    Settings::fromEnvironment() or Session::current().settings() to keep
//    the environment's (SINTER_DEBUG, SINTER_DUMP_DIR, ...).
// The tools build their session from their flags over the environment's
// defaults (sinter-dump-step records on the reference executor alone) and
// run under it; sinter-train's job file is turned into one (its
// compiler_config section), and a program it launches gets the job's
// compiler settings through the environment variables, where that process
// starts.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_SESSION_H
#define SINTER_SESSION_H

#include "sinter/Compiler.h"
#include "sinter/Device.h"
#include "sinter/Tensor.h"

#include <memory>
#include <source_location>

namespace sinter::runtime {
struct ProcessGroup;
}

namespace sinter {

/// Everything a session's steps run with: a plain value. Its defaults are
/// the built-in ones; Settings::fromEnvironment() gives the environment's.
struct Settings {
  /// Where the session's new tensors are made (factories, parameters,
  /// arange; a constant combined with a tensor takes that tensor's). The
  /// CPU today: a CUDA device is refused (Session's constructor says why)
  /// until the CUDA backend lands. SINTER_DEVICE sets the default's.
  Device device = Device::cpu();
  /// How steps compile and run (compiled or eager, reference, debug dumps,
  /// budget and limit, checked numerics, fallbacks).
  CompilerConfig compiler = {};
  /// The ranks the steps' collectives go between (Note [Collectives in the
  /// step] in sinter/Distributed.h); null: the process's group, from
  /// sinter::distributed::init_process_group().
  std::shared_ptr<runtime::ProcessGroup> process_group = nullptr;

  /// The defaults from the environment, read once per process.
  static Settings fromEnvironment();
};

/// A program's settings, checked once (Note [Sessions]). Cheap to copy.
class Session {
public:
  /// Throws sinter::Error at `where` for settings that cannot be: a
  /// negative budget or limit, a numerics level other than 0-2, a debug
  /// level other than 0-4, a device this build cannot run steps on.
  explicit Session(Settings settings = Settings::fromEnvironment(),
                   std::source_location where = std::source_location::current());

  const Settings &settings() const { return settings_; }
  const CompilerConfig &compiler() const { return settings_.compiler; }
  const Device &device() const { return settings_.device; }

  /// Computes every pending tensor that is still referenced, as one step
  /// with this session's settings, and cuts the graph behind it (as
  /// sinter::mark_step()).
  void mark_step(Loc loc = Loc::current()) const;
  /// The memory the next step will take with this session's settings (as
  /// sinter::plan_step()).
  StepMemory plan_step(PlanOptions options = {}, Loc loc = Loc::current()) const;

  /// The calling thread's session: its innermost live Use, else the
  /// process's default session (Settings::fromEnvironment(), made at first
  /// use; an environment it refuses throws here, at the caller's line).
  /// The reference lives as long as that Use (the default: for good); copy
  /// the session to keep it longer.
  static const Session &current(std::source_location where = std::source_location::current());

  class Use;

private:
  Settings settings_;
};

/// Makes a session the calling thread's current one for the Use's life;
/// the one before it is current again when it ends. Holds its own copy.
/// Name it (`Session::Use session(settings);`): a temporary ends at once.
class [[nodiscard]] Session::Use {
public:
  explicit Use(Session session);
  /// The same as Use(Session(settings, where)).
  explicit Use(Settings settings, std::source_location where = std::source_location::current());
  ~Use();
  Use(const Use &) = delete;
  Use &operator=(const Use &) = delete;

  const Session &session() const { return session_; }

private:
  Session session_;
  const Session *previous_;
};

} // namespace sinter

#endif // SINTER_SESSION_H
