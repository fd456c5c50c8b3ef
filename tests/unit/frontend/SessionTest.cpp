//===- SessionTest.cpp - settings held by sessions, current per thread ----===//
//
// Note [Sessions] in sinter/Session.h. No step compiler is installed here
// (but by the one test that installs a failing one for its duration): a
// step runs on the reference executor, and a session that allows no
// fallback refuses it, which tells which session's settings a step used.
//
//===----------------------------------------------------------------------===//
#include "sinter/Session.h"
#include "GradCheck.h"
#include "sinter/Compiler.h"
#include "sinter/runtime/Environment.h"
#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace sinter {
namespace {

using sinter::testing::errorOf;
using ::testing::HasSubstr;

const Settings kNoFallback = {.compiler = {.allow_fallback = false}};
const Settings kReference = {.compiler = {.use_reference = true, .allow_fallback = false}};

TEST(Session, TheEnvironmentGivesTheDefaultSessionsSettings) {
  const runtime::Environment &env = runtime::environment();
  Settings settings = Settings::fromEnvironment();
  EXPECT_EQ(settings.device, env.device.empty() ? Device::cpu() : Device::parse(env.device));
  EXPECT_EQ(settings.compiler.enabled, env.compiler_enabled);
  EXPECT_EQ(settings.compiler.use_reference, env.use_reference);
  EXPECT_EQ(settings.compiler.debug, env.debug);
  EXPECT_EQ(settings.compiler.dump_dir, env.dump_dir);
  EXPECT_EQ(settings.compiler.check_numerics, env.check_numerics);
  EXPECT_EQ(settings.compiler.memory_budget, env.memory_budget);
  EXPECT_EQ(settings.compiler.memory_limit, env.memory_limit);
  EXPECT_EQ(settings.compiler.allow_fallback, env.allow_fallback);
  EXPECT_EQ(settings.compiler.allow_tf32, env.allow_tf32);
  // No Use is live: the current session is the default one, made once.
  const Session &current = Session::current();
  EXPECT_EQ(&current, &Session::current());
  EXPECT_EQ(current.compiler().memory_budget, env.memory_budget);
  EXPECT_EQ(current.device(), settings.device);
}

TEST(Session, SettingsThatCannotBeAreRefusedAtTheCallersLine) {
  std::string budget = errorOf([] { Session session({.compiler = {.memory_budget = -1}}); });
  EXPECT_THAT(budget, HasSubstr("SessionTest.cpp:"));
  EXPECT_THAT(budget, HasSubstr("memory_budget is -1 bytes; it must be 0 (no budget) or positive"));
  EXPECT_THAT(errorOf([] { Session session({.compiler = {.memory_limit = -2}}); }),
              HasSubstr("memory_limit is -2 bytes"));
  EXPECT_THAT(errorOf([] { Session session({.compiler = {.check_numerics = 3}}); }),
              HasSubstr("check_numerics is 3; it must be 0 (off), 1 (NaN) or 2"));
  EXPECT_THAT(errorOf([] { Session session({.compiler = {.debug = 5}}); }),
              HasSubstr("debug is 5; it must be a level from 0 to 4"));
  EXPECT_THAT(errorOf([] { Session session({.compiler = {.memory_budget_hard = true}}); }),
              HasSubstr("memory_budget_hard is set without a memory_budget"));
  // A Use of refused settings is refused the same way, and nothing changes.
  const Session *before = &Session::current();
  EXPECT_THAT(errorOf([] { Session::Use use({.compiler = {.memory_budget = -1}}); }),
              HasSubstr("memory_budget is -1 bytes"));
  EXPECT_EQ(&Session::current(), before);
}

TEST(Session, ACudaDeviceIsRefusedWithoutAGpuOrTheSimulator) {
  // Without a usable GPU, the driver's reason, with the device, this line
  // and the simulator (SINTER_CUDA_SIMULATOR is not set here); nothing runs
  // on the CPU in its place. With a GPU the session is made.
  if (Device::cuda(0).available()) {
    Session session({.device = Device::cuda(0)});
    EXPECT_EQ(session.device(), Device::cuda(0));
    GTEST_SKIP() << "this machine has a GPU: the session on cuda:0 was made";
  }
  std::string message = errorOf([] { Session session({.device = Device::cuda(0)}); });
  EXPECT_THAT(message, HasSubstr("SessionTest.cpp:"));
  EXPECT_THAT(
      message,
      HasSubstr("Settings::device is cuda:0 (SINTER_DEVICE, a tool's --device, or code): "));
  EXPECT_THAT(message, HasSubstr("no CUDA device"));
  EXPECT_THAT(message,
              HasSubstr("SINTER_CUDA_SIMULATOR=1 to run CUDA steps on the CUDA simulator"));
}

TEST(Session, AUseIsAScopeOnItsOwnThread) {
  const Session *outside = &Session::current();
  {
    Session::Use reference(kReference);
    EXPECT_TRUE(Session::current().compiler().use_reference);
    {
      Session::Use budget({.compiler = {.memory_budget = 1 << 20}});
      EXPECT_FALSE(Session::current().compiler().use_reference);
      EXPECT_EQ(Session::current().compiler().memory_budget, 1 << 20);
    }
    EXPECT_TRUE(Session::current().compiler().use_reference);
    EXPECT_EQ(&Session::current(), &reference.session());
    // Another thread has its own current session: the default one.
    const Session *there = nullptr;
    std::thread([&] { there = &Session::current(); }).join();
    EXPECT_EQ(there, outside);
  }
  EXPECT_EQ(&Session::current(), outside);
}

TEST(Session, AUseHoldsItsOwnCopy) {
  std::optional<Session::Use> use;
  {
    Session session({.compiler = {.memory_budget = 4096}});
    use.emplace(session);
  }
  EXPECT_EQ(Session::current().compiler().memory_budget, 4096);
  use.reset();
}

TEST(Session, AStepRunsWithTheSessionItIsGiven) {
  // The current session refuses fallbacks; the given one runs on the
  // reference executor, and the step's values are its.
  Session::Use strict(kNoFallback);
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  Tensor y = x * 2.0;
  EXPECT_THAT(errorOf([] { mark_step(); }),
              HasSubstr("the step cannot be compiled, and fallbacks to the reference executor are "
                        "not allowed"));
  Session(kReference).mark_step();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(Session, ReadingATensorFallsBackByTheStepsRule) {
  // No step compiler in this binary: reading a pending tensor runs it on the
  // reference executor as a step would, counted as a fallback; refused where
  // fallbacks are not allowed, and where numerics are to be checked (the
  // reference executor checks none), naming why.
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  {
    Session::Use strict(kNoFallback);
    Tensor y = x * 2.0;
    EXPECT_THAT(errorOf([&] { y.to_vector<float>(); }),
                HasSubstr("reading a tensor cannot be compiled, and fallbacks to the reference "
                          "executor are not allowed (CompilerConfig::allow_fallback; a job's "
                          "compiler_config.allow_fallback): no step compiler is installed"));
  }
  {
    Session::Use checked({.compiler = {.check_numerics = 1}});
    Tensor y = x * 2.0;
    EXPECT_THAT(errorOf([&] { y.to_vector<float>(); }),
                HasSubstr("reading a tensor cannot be compiled, and the reference executor "
                          "cannot check its numerics (CompilerConfig::check_numerics): no step "
                          "compiler is installed"));
  }
  Session::Use lenient({.compiler = {.allow_fallback = true}});
  int64_t before = metrics().fallbacks;
  Tensor y = x * 2.0;
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(metrics().fallbacks, before + 1);
  // On the reference executor by choice, nothing falls back.
  Session::Use reference(kReference);
  Tensor z = x * 3.0;
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ(metrics().fallbacks, before + 1);
}

/// A step compiler whose runs fail after they may have written over the
/// inputs they were given to write into (as a step on a CUDA device whose
/// kernel faults once its updates began, Note [Donation]).
class FailsAfterWriting : public detail::StepCompiler {
public:
  bool run(const std::vector<lazy::NodePtr> &, uint64_t, const CompilerConfig &,
           const std::vector<const lazy::Node *> &donatable, runtime::Communicator *,
           std::vector<std::shared_ptr<const lazy::Value>> &, StepMetrics &step,
           std::string &why) override {
    why = "launch 3 of 9 on cuda:0 failed: a kernel wrote out of bounds";
    step.inputs_overwritten = !donatable.empty();
    return false;
  }
  bool plan(const std::vector<lazy::NodePtr> &, uint64_t, const CompilerConfig &,
            const std::vector<const lazy::Node *> &, bool, StepMemory &, StepMetrics &,
            std::string &why) override {
    why = "not planned";
    return false;
  }
  bool export_step(const std::vector<lazy::NodePtr> &, const CompilerConfig &,
                   const std::vector<const lazy::Node *> &, runtime::Program &, std::string &,
                   std::string &why) override {
    why = "not exported";
    return false;
  }
  bool run_eager(const std::vector<lazy::NodePtr> &, const CompilerConfig &,
                 runtime::Communicator *, std::vector<std::shared_ptr<const lazy::Value>> &,
                 StepMetrics &, std::string &why) override {
    why = "not eager";
    return false;
  }
};

TEST(Session, AStepThatFailedAfterWritingOverItsInputsIsAnErrorNotAFallback) {
  struct Installed {
    Installed() { detail::register_step_compiler(std::make_shared<FailsAfterWriting>()); }
    ~Installed() { detail::register_step_compiler(nullptr); }
  } installed;
  Session::Use lenient({.compiler = {.allow_fallback = true}});
  // An update whose old value nothing else holds: the step was given its
  // memory, so after the failure nothing may compute the step from it.
  Tensor w = from_vector<float>({1, 2, 3}, {3});
  w = w * 2.0;
  int64_t fallbacks = metrics().fallbacks;
  EXPECT_THAT(errorOf([] { mark_step(); }),
              HasSubstr("a kernel wrote out of bounds; the step may have written updates over "
                        "its parameters' or optimizer state's memory"));
  EXPECT_EQ(metrics().fallbacks, fallbacks) << "it fell back";
  w = Tensor(); // pending still: not part of the next step
  // The old value held elsewhere: nothing was given away, and the same
  // failure falls back to the reference executor.
  Tensor v = from_vector<float>({1, 2, 3}, {3});
  Tensor held = v;
  v = v * 2.0;
  mark_step();
  EXPECT_EQ(metrics().fallbacks, fallbacks + 1);
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(Session, TheReferenceExecutorRefusesToCheckNumerics) {
  EXPECT_THAT(
      errorOf([] { Session session({.compiler = {.use_reference = true, .check_numerics = 1}}); }),
      HasSubstr("Settings::compiler.check_numerics is 1 but steps run on the reference "
                "executor (use_reference, SINTER_COMPILER=reference), which checks no "
                "numerics"));
}

TEST(SessionDeathTest, AUseEndedOutOfOrderAborts) {
  // The inner Use would otherwise make the freed outer one current again.
  EXPECT_DEATH(
      {
        auto outer = std::make_unique<Session::Use>(Settings{});
        Session::Use inner(Settings{});
        outer.reset();
      },
      "a Session::Use ended while it was not its thread's current session");
}

} // namespace
} // namespace sinter
