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

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
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
  // The library and its checksum's marker (one a compile whose bytes
  // differ: Note [A kernel cache that survives crashes]); no temporary.
  std::string library = fs::path(libraries[0].path).filename();
  std::string stem = library.substr(0, library.size() - 3);
  int markers = 0;
  for (const std::string &name : cache.files()) {
    if (name == library)
      continue;
    EXPECT_TRUE(name.rfind(stem + ".", 0) == 0 && name.size() > 3 &&
                name.substr(name.size() - 3) == ".ok")
        << name;
    ++markers;
  }
  EXPECT_GE(markers, 1);
  EXPECT_LE(markers, kThreads);

  compileAll();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(compiled[t]) << "thread " << t << ": " << errors[t];
    EXPECT_TRUE(libraries[t].cacheHit) << "thread " << t;
  }
}

TEST(KernelCache, ADamagedEntryIsSaidAndBuiltAgain) {
  // Note [A kernel cache that survives crashes]. Damage is written under a
  // new name and renamed over the entry: the file a process may have
  // mapped is never changed in place.
  ColdCache cache;
  const std::string source = "extern \"C\" int sinter_seven() { return 7; }\n";
  codegen::CompiledLibrary library;
  std::string error;
  auto compile = [&] {
    ::testing::internal::CaptureStderr();
    bool ok = codegen::compileHostLibrary(source, library, error);
    std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(ok) << error;
    return said;
  };
  EXPECT_EQ(compile(), "");
  ASSERT_FALSE(library.cacheHit);
  const std::string path = library.path, stem = path.substr(0, path.size() - 3);
  auto bytes = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  auto replace = [&](const std::string &content) {
    std::ofstream(path + ".damage", std::ios::binary) << content;
    fs::rename(path + ".damage", path);
  };
  const std::string whole = bytes();

  // Whole by its checksum but not loadable (as a library of another libc):
  // bytes with a marker of their own. (Checked before this process loads
  // the entry: a loaded path is not read again.)
  const std::string junk = "not a shared library";
  replace(junk);
  std::ofstream(stem + "." +
                llvm::utohexstr(llvm::xxh3_64bits(llvm::arrayRefFromStringRef(junk)), true) + "-" +
                std::to_string(junk.size()) + ".ok");
  std::string said = compile();
  EXPECT_NE(said.find("the kernel cache entry " + path + " cannot be loaded ("), std::string::npos)
      << said;
  EXPECT_FALSE(library.cacheHit);
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_EQ(reinterpret_cast<int (*)()>(dlsym(handle, "sinter_seven"))(), 7);
  EXPECT_EQ(compile(), "");
  EXPECT_TRUE(library.cacheHit);

  // Truncated (a crash, a full disk): its checksum has no marker.
  replace(whole.substr(0, whole.size() / 2));
  said = compile();
  EXPECT_NE(said.find("the kernel cache entry " + path +
                      " does not match its checksum (truncated or damaged); building it again"),
            std::string::npos)
      << said;
  EXPECT_FALSE(library.cacheHit);
  EXPECT_EQ(bytes().size(), whole.size());
  EXPECT_EQ(compile(), "");
  EXPECT_TRUE(library.cacheHit);

  // An entry from before checksums (no marker at all): built again, quietly.
  for (const std::string &name : cache.files())
    if (name.size() > 3 && name.substr(name.size() - 3) == ".ok")
      fs::remove(fs::path(path).parent_path() / name);
  EXPECT_EQ(compile(), "");
  EXPECT_FALSE(library.cacheHit);
  EXPECT_EQ(compile(), "");
  EXPECT_TRUE(library.cacheHit);
}

TEST(KernelCache, TemporariesOfKilledCompilesAreSweptAndLiveOnesKept) {
  ColdCache cache;
  codegen::CompiledLibrary library;
  std::string error;
  const std::string dir = codegen::kernelCacheDir();
  fs::create_directories(dir);
  const std::vector<std::string> old = {"kernel-0123456789abcdef-a1b2c3d4.so.tmp",
                                        "kernel-0123456789abcdef-a1b2c3d4.cpp"};
  const std::vector<std::string> young = {"kernel-fedcba9876543210-e5f6a7b8.so.tmp",
                                          "kernel-fedcba9876543210-e5f6a7b8.cpp"};
  for (const std::string &name : old) {
    std::ofstream(dir + "/" + name) << "half";
    fs::last_write_time(dir + "/" + name,
                        fs::file_time_type::clock::now() - std::chrono::hours(2));
  }
  for (const std::string &name : young)
    std::ofstream(dir + "/" + name) << "being written";
  ASSERT_TRUE(codegen::compileHostLibrary("extern \"C\" int sinter_eight() { return 8; }\n",
                                          library, error))
      << error;
  for (const std::string &name : old)
    EXPECT_FALSE(fs::exists(dir + "/" + name)) << name << " left";
  for (const std::string &name : young)
    EXPECT_TRUE(fs::exists(dir + "/" + name)) << name << " removed while its compile may run";
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
