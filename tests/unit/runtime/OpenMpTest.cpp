//===- OpenMpTest.cpp - how kernels' OpenMP threads wait between kernels ---===//
//
// Note [OpenMP's idle threads] in runtime/lib/Program.cpp: loading a CPU
// program asks OpenMP's idle threads to spin about 0.3 ms before they sleep,
// unless the user chose. OpenMP reads the setting once, when it loads, so
// each case checks the environment the first load leaves (before any kernel
// library, which would load OpenMP, exists: the library here does not).
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using sinter::runtime::CpuExecutable;
using sinter::runtime::Program;

/// Loads a program whose library does not exist: the load fails, naming it,
/// after it has set what OpenMP will read.
void loadMissingLibrary() {
  Program program;
  program.library = "/nonexistent/sinter-kernels.so";
  auto executable = CpuExecutable::load(program);
  ASSERT_FALSE(executable.ok());
  EXPECT_NE(executable.status().message().find("/nonexistent/sinter-kernels.so"), std::string::npos)
      << executable.status().message();
}

TEST(OpenMpIdleThreads, SpinBrieflyByDefault) {
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("GOMP_SPINCOUNT");
  ASSERT_NO_FATAL_FAILURE(loadMissingLibrary());
  const char *spin = std::getenv("GOMP_SPINCOUNT");
  ASSERT_NE(spin, nullptr);
  EXPECT_STREQ(spin, "30000");
  EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);
}

TEST(OpenMpIdleThreads, AnEmptySettingIsNoChoice) {
  // libgomp reads an empty OMP_WAIT_POLICY as unset: the default applies.
  setenv("OMP_WAIT_POLICY", "", 1);
  setenv("GOMP_SPINCOUNT", "", 1);
  ASSERT_NO_FATAL_FAILURE(loadMissingLibrary());
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), "30000");
}

TEST(OpenMpIdleThreads, TheUsersWaitPolicyWins) {
  setenv("OMP_WAIT_POLICY", "passive", 1);
  unsetenv("GOMP_SPINCOUNT");
  ASSERT_NO_FATAL_FAILURE(loadMissingLibrary());
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
  EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "passive");
}

TEST(OpenMpIdleThreads, TheUsersSpinCountWins) {
  unsetenv("OMP_WAIT_POLICY");
  setenv("GOMP_SPINCOUNT", "5", 1);
  ASSERT_NO_FATAL_FAILURE(loadMissingLibrary());
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), "5");
  EXPECT_EQ(std::getenv("OMP_WAIT_POLICY"), nullptr);
}

} // namespace
