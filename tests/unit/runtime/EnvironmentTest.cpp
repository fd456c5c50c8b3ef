//===- EnvironmentTest.cpp - the environment, parsed once -----------------===//
#include "sinter/runtime/Environment.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sinter::runtime {
namespace {

Environment parse(const std::map<std::string, std::string> &variables) {
  return parseEnvironment([&](const char *name) -> const char * {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

/// Expects the compiler's settings at their defaults.
void expectCompilerDefaults(const Environment &env) {
  EXPECT_EQ(env.device, "");
  EXPECT_TRUE(env.compiler_enabled);
  EXPECT_FALSE(env.use_reference);
  EXPECT_EQ(env.debug, 0);
  EXPECT_EQ(env.check_numerics, 0);
  EXPECT_EQ(env.memory_budget, 0);
  EXPECT_EQ(env.memory_limit, 0);
  EXPECT_TRUE(env.allow_fallback);
  EXPECT_FALSE(env.allow_tf32);
}

TEST(Environment, NothingSetGivesTheDefaults) {
  Environment env = parse({});
  expectCompilerDefaults(env);
  EXPECT_EQ(env.cache_dir, "");
  EXPECT_EQ(env.profile, "");
  EXPECT_TRUE(env.adaptive_threads);
  EXPECT_TRUE(env.warnings.empty());
}

TEST(Environment, EveryVariableIsRead) {
  Environment env = parse({{"SINTER_DEVICE", "cuda:1"},
                           {"SINTER_COMPILER", "reference"},
                           {"SINTER_DEBUG", "3"},
                           {"SINTER_DUMP_DIR", "/tmp/dumps"},
                           {"SINTER_CHECK_NUMERICS", "2"},
                           {"SINTER_MEMORY_BUDGET", "256MiB"},
                           {"SINTER_MEMORY_LIMIT", "2GiB"},
                           {"SINTER_ALLOW_FALLBACK", "0"},
                           {"SINTER_ALLOW_TF32", "1"},
                           {"SINTER_CACHE_DIR", "/tmp/cache"},
                           {"SINTER_KERNELS_DIR", "/tmp/kernels"},
                           {"CXX", "clang++"},
                           {"DNNL_MAX_CPU_ISA", "AVX2"},
                           {"SINTER_PROFILE", "1"},
                           {"SINTER_ADAPTIVE_THREADS", "0"},
                           {"SINTER_CUDA_DRIVER", "/opt/libcuda.so"},
                           {"SINTER_NVRTC", "/opt/libnvrtc.so"},
                           {"SINTER_CUBLAS", "/opt/libcublas.so"},
                           {"SINTER_CUDA_SYNC", "1"},
                           {"SINTER_CUDA_SIMULATOR", "shuffled"}});
  EXPECT_EQ(env.device, "cuda:1");
  EXPECT_TRUE(env.compiler_enabled);
  EXPECT_TRUE(env.use_reference);
  EXPECT_EQ(env.debug, 3);
  EXPECT_EQ(env.dump_dir, "/tmp/dumps");
  EXPECT_EQ(env.check_numerics, 2);
  EXPECT_EQ(env.memory_budget, 256 << 20);
  EXPECT_EQ(env.memory_limit, int64_t(2) << 30);
  EXPECT_FALSE(env.allow_fallback);
  EXPECT_TRUE(env.allow_tf32);
  EXPECT_EQ(env.cache_dir, "/tmp/cache");
  EXPECT_EQ(env.kernels_dir, "/tmp/kernels");
  EXPECT_EQ(env.cxx, "clang++");
  EXPECT_EQ(env.onednn_max_cpu_isa, "AVX2");
  EXPECT_EQ(env.profile, "-"); // 1: stderr
  EXPECT_FALSE(env.adaptive_threads);
  EXPECT_EQ(env.cuda_driver, "/opt/libcuda.so");
  EXPECT_EQ(env.nvrtc_library, "/opt/libnvrtc.so");
  EXPECT_EQ(env.cublas_library, "/opt/libcublas.so");
  EXPECT_TRUE(env.cuda_sync);
  EXPECT_TRUE(env.cuda_simulator);
  EXPECT_TRUE(env.cuda_simulator_shuffled);
  EXPECT_TRUE(env.warnings.empty());
  Environment simulated = parse({{"SINTER_CUDA_SIMULATOR", "1"}});
  EXPECT_TRUE(simulated.cuda_simulator);
  EXPECT_FALSE(simulated.cuda_simulator_shuffled);
  EXPECT_FALSE(parse({{"SINTER_CUDA_SIMULATOR", "0"}}).cuda_simulator);
  EXPECT_FALSE(parse({{"SINTER_COMPILER", "0"}}).compiler_enabled);
  EXPECT_EQ(parse({{"SINTER_DEVICE", "cpu"}}).device, "cpu");
  EXPECT_EQ(parse({{"SINTER_DEVICE", "cuda"}}).device, "cuda");
  EXPECT_EQ(parse({{"SINTER_PROFILE", "/tmp/profile.txt"}}).profile, "/tmp/profile.txt");
  EXPECT_EQ(parse({{"SINTER_PROFILE", "0"}}).profile, "");
  // oneDNN's own name wins over its older one, as oneDNN reads them.
  EXPECT_EQ(parse({{"ONEDNN_MAX_CPU_ISA", "AVX512_CORE"}, {"DNNL_MAX_CPU_ISA", "AVX2"}})
                .onednn_max_cpu_isa,
            "AVX512_CORE");
}

TEST(Environment, AValueOfNoFormIsSaidAndTheDefaultKept) {
  Environment env = parse({{"SINTER_DEVICE", "gpu"},
                           {"SINTER_COMPILER", "banana"},
                           {"SINTER_DEBUG", "9"},
                           {"SINTER_CHECK_NUMERICS", "yes"},
                           {"SINTER_MEMORY_BUDGET", "lots"},
                           {"SINTER_MEMORY_LIMIT", "-5"},
                           {"SINTER_ALLOW_FALLBACK", "no"},
                           {"SINTER_ALLOW_TF32", "yes"},
                           {"SINTER_CUDA_SIMULATOR", "yes"}});
  ASSERT_EQ(env.warnings.size(), 9u);
  EXPECT_EQ(
      env.warnings.front(),
      "sinter: warning: SINTER_DEVICE='gpu' is not cpu, cuda or cuda:N; steps run on the CPU");
  env.warnings.erase(env.warnings.begin());
  EXPECT_EQ(env.warnings[0], "sinter: warning: SINTER_COMPILER='banana' is not 1 (compiled), 0 "
                             "(eager) or reference; steps run compiled");
  EXPECT_EQ(env.warnings[1], "sinter: warning: SINTER_DEBUG='9' is not a level from 0 to 4");
  EXPECT_EQ(env.warnings[2], "sinter: warning: SINTER_CHECK_NUMERICS='yes' is not 0 (off), 1 "
                             "(NaN) or 2 (NaN and infinities); numerics are not checked");
  EXPECT_EQ(env.warnings[3], "sinter: warning: SINTER_MEMORY_BUDGET='lots' is not a number of "
                             "bytes (optionally with KiB, MiB or GiB); no budget");
  EXPECT_EQ(env.warnings[4], "sinter: warning: SINTER_MEMORY_LIMIT='-5' is not a number of bytes "
                             "(optionally with KiB, MiB or GiB); ignored");
  EXPECT_EQ(env.warnings[5], "sinter: warning: SINTER_ALLOW_FALLBACK='no' is not 1 (allowed) or 0 "
                             "(an error); fallbacks are allowed");
  EXPECT_EQ(env.warnings[6], "sinter: warning: SINTER_ALLOW_TF32='yes' is not 1 (matrix products "
                             "on a GPU may use TF32) or 0; products compute in f32");
  EXPECT_FALSE(env.allow_tf32);
  EXPECT_EQ(env.warnings[7], "sinter: warning: SINTER_CUDA_SIMULATOR='yes' is not 0 (off), 1 "
                             "(CUDA devices are the simulator) or shuffled (and every launch in "
                             "its checking mode); the simulator is off");
  EXPECT_FALSE(env.cuda_simulator);
  expectCompilerDefaults(env);
  for (const char *bad : {"cuda:", "cuda:x", "cuda:-1", "CPU", "cuda:99999999999999"})
    EXPECT_EQ(parse({{"SINTER_DEVICE", bad}}).warnings.size(), 1u) << bad;
}

TEST(Environment, TheTestFaultsAreReadAndABadOneIsSaid) {
  // Note [Faults for tests] in runtime/lib/Files.cpp.
  Environment env =
      parse({{"SINTER_TEST_WRITE_LIMIT", "3584KiB"}, {"SINTER_TEST_KILL_BEFORE_RENAME", "6"}});
  EXPECT_EQ(env.test_write_limit, 3584 << 10);
  EXPECT_EQ(env.test_kill_before_rename, 6);
  EXPECT_TRUE(env.warnings.empty());
  Environment none = parse({});
  EXPECT_EQ(none.test_write_limit, 0);
  EXPECT_EQ(none.test_kill_before_rename, 0);
  Environment bad =
      parse({{"SINTER_TEST_WRITE_LIMIT", "full"}, {"SINTER_TEST_KILL_BEFORE_RENAME", "-1"}});
  ASSERT_EQ(bad.warnings.size(), 2u);
  EXPECT_EQ(bad.warnings[1], "sinter: warning: SINTER_TEST_KILL_BEFORE_RENAME='-1' is not a count "
                             "of atomic writes; never");
  EXPECT_EQ(bad.test_kill_before_rename, 0);
}

TEST(Environment, ReadOnceForTheProcess) {
  const Environment &first = environment();
  EXPECT_EQ(&first, &environment());
}

} // namespace
} // namespace sinter::runtime
