//===- ConcurrencyTest.cpp - the kernel cache and executables under threads ===//
//
// What several threads of one process share: the kernel cache on disk (a
// cold cache compiled into by many threads at once), the loaded kernel
// libraries, the caching host allocator, the core-sharing sampler and the
// profile table. Each case checks the results; the ThreadSanitizer run
// (SINTER_SANITIZE=thread ./tools/test.sh; README, Sanitizers) checks that
// nothing on the way is a data race.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/Program.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace sinter;
namespace fs = std::filesystem;

/// The kernel cache in a new empty folder for one test (setKernelCacheDir),
/// and back to the environment's after.
class ColdCache {
public:
  ColdCache() {
    std::string pattern = (fs::temp_directory_path() / "sinter-cold-cache-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    codegen::setKernelCacheDir(dir_);
  }
  ~ColdCache() {
    codegen::setKernelCacheDir("");
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  /// The names of the files in the cache's kernel folder.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto &entry : fs::directory_iterator(dir_ + "/kernels"))
      names.push_back(entry.path().filename().string());
    return names;
  }

private:
  std::string dir_;
};

TEST(KernelCache, ThreadsCompilingOneKernelIntoAColdCacheShareOneWholeLibrary) {
  // Every thread asks for the same kernel at once: each gets a library that
  // loads and runs, all the same file, and the cache holds that one file and
  // no temporaries. Asked again, every thread hits the cache.
  ColdCache cache;
  const std::string source = "extern \"C\" int sinter_answer(int x) { return 6 * x; }\n";
  constexpr int kThreads = 4;
  std::vector<codegen::CompiledLibrary> libraries(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<int> compiled(kThreads); // not vector<bool>: threads write apart
  auto compileAll = [&] {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(
          [&, t] { compiled[t] = codegen::compileHostLibrary(source, libraries[t], errors[t]); });
    for (std::thread &thread : threads)
      thread.join();
  };
  compileAll();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(compiled[t]) << "thread " << t << ": " << errors[t];
    EXPECT_EQ(libraries[t].path, libraries[0].path);
  }
  // As runtime::CpuExecutable: OpenMP's threads outlive the library.
  void *handle = dlopen(libraries[0].path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto answer = reinterpret_cast<int (*)(int)>(dlsym(handle, "sinter_answer"));
  ASSERT_NE(answer, nullptr);
  EXPECT_EQ(answer(7), 42);
  EXPECT_EQ(cache.files(), std::vector<std::string>{fs::path(libraries[0].path).filename()});

  compileAll();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(compiled[t]) << "thread " << t << ": " << errors[t];
    EXPECT_TRUE(libraries[t].cacheHit) << "thread " << t;
  }
}

TEST(CpuExecutable, ExecutablesOfOneStepRunOnSeveralThreadsAtOnce) {
  // One compiled step loaded three times and run on three threads at once,
  // many times, gives what one run on one thread gives, to the bit: runs
  // share the kernel library, the host allocator (arenas and results), the
  // core-sharing sampler and the OpenMP runtime, and nothing else.
  manual_seed(31);
  auto model = models::mlp({.in_features = 24, .hidden = {32}, .num_classes = 6});
  Tensor x = randn({16, 24});
  mark_step();
  Tensor y = nn::functional::softmax((*model)(x), 1);
  std::vector<lazy::NodePtr> nodes = {lazy::node_of(y)};
  compiler::StepBuild step;
  std::string error;
  ASSERT_TRUE(compiler::compileStep(nodes, codegen::cpuTarget(), step, error)) << error;
  std::vector<const void *> arguments;
  for (const lazy::Node *node : lazy::topological_order(nodes))
    if (node->op == lazy::Op::Data)
      arguments.push_back(node->value->bytes());

  /// Runs `executable` once: the result's bytes.
  auto runOnce = [&](runtime::CpuExecutable &executable, std::string &why) {
    std::vector<uint8_t> bytes(executable.resultBytes(0));
    std::vector<void *> results = {bytes.data()};
    if (absl::Status status = executable.run(arguments, results); !status.ok()) {
      why = std::string(status.message());
      return bytes;
    }
    if (executable.resultInArena(0)) {
      std::memcpy(bytes.data(), results[0], bytes.size());
      runtime::HostAllocator::get().deallocate(results[0]);
    }
    return bytes;
  };
  auto alone = runtime::CpuExecutable::load(step.program);
  ASSERT_TRUE(alone.ok()) << alone.status();
  std::string why;
  std::vector<uint8_t> expected = runOnce(**alone, why);
  ASSERT_EQ(why, "");

  constexpr int kThreads = 3, kRuns = 25;
  std::vector<std::unique_ptr<runtime::CpuExecutable>> executables;
  for (int t = 0; t < kThreads; ++t) {
    auto loaded = runtime::CpuExecutable::load(step.program);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    executables.push_back(std::move(*loaded));
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int run = 0; run < kRuns && failures[t].empty(); ++run) {
        std::string failed;
        std::vector<uint8_t> got = runOnce(*executables[t], failed);
        if (!failed.empty())
          failures[t] = "run " + std::to_string(run) + " failed: " + failed;
        else if (got != expected)
          failures[t] = "run " + std::to_string(run) + " differs from the run on one thread";
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], "") << "thread " << t;
  y.to_vector<float>(); // the pending value, computed
}

} // namespace
