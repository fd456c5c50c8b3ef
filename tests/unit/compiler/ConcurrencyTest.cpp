//===- ConcurrencyTest.cpp - the kernel cache and executables under threads ===//
//
// What several threads of one process share: the kernel cache on disk (a
// cold cache compiled into by many threads at once), the loaded kernel
// libraries, the caching host allocator, the core-sharing sampler and the
// profile table, and the lazy graph (threads recording and stepping at once,
// Note [Threads and the lazy graph]). Each case checks the results; the
// ThreadSanitizer run
// (SINTER_SANITIZE=thread ./tools/test.sh; README, Sanitizers) checks that
// nothing on the way is a data race.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/Program.h"
#include "sinter/sinter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

#include <gtest/gtest.h>

#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
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
    fs::last_write_time(dir + "/" + name, fs::file_time_type::clock::now() - std::chrono::hours(2));
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

/// Trains a small two-layer network of its own for `steps` compiled steps
/// (SGD, weights made from `seed` without the global generator) and returns
/// every loss and the weights at the end. `shared` is read by every thread
/// (a frozen input projection).
struct Trained {
  std::vector<float> losses, weights;
};
Trained trainOwnModel(int seed, const Tensor &shared, int steps) {
  namespace F = nn::functional;
  Session::Use session({.compiler = {.enabled = true, .allow_fallback = false}});
  auto values = [seed](int64_t count, float scale, int salt) {
    std::vector<float> out(count);
    for (int64_t i = 0; i < count; ++i)
      out[i] = scale * static_cast<float>(std::sin(0.37 * (i + 1) * (seed + 3) + salt));
    return out;
  };
  Tensor w1 = from_vector(values(16 * 12, 0.3f, 1), {16, 12}).requires_grad_();
  Tensor b1 = from_vector(values(16, 0.1f, 2), {16}).requires_grad_();
  Tensor w2 = from_vector(values(4 * 16, 0.3f, 3), {4, 16}).requires_grad_();
  Tensor x = from_vector(values(24 * 8, 1.0f, 4), {24, 8});
  std::vector<int64_t> labels(24);
  for (int i = 0; i < 24; ++i)
    labels[i] = (i * 7 + seed) % 4;
  Tensor targets = from_vector(labels, {24}, DType::i64);
  optim::SGD optimizer({w1, b1, w2}, {.lr = 0.1});
  Trained trained;
  for (int step = 0; step < steps; ++step) {
    Tensor hidden = F::relu(F::linear(F::linear(x, shared), w1, b1));
    Tensor loss = F::cross_entropy(F::linear(hidden, w2), targets);
    loss.backward();
    optimizer.step();
    optimizer.zero_grad();
    // A pending tensor read on its own (a step of its own, drawn from the
    // shared generator), between this thread's recording and its step.
    std::vector<float> noise = randn({8}).to_vector<float>();
    if (noise.size() != 8)
      throw std::runtime_error("randn read " + std::to_string(noise.size()) + " values");
    mark_step();
    trained.losses.push_back(loss.item<float>());
  }
  for (const Tensor &w : {w1, b1, w2})
    for (float v : w.to_vector<float>())
      trained.weights.push_back(v);
  return trained;
}

/// The largest difference between `a` and `b` relative to b's largest
/// magnitude, or infinity when their sizes differ.
double relativeDifference(const std::vector<float> &a, const std::vector<float> &b) {
  if (a.size() != b.size())
    return INFINITY;
  double scale = 0, difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::fabs(double(b[i])));
    difference = std::max(difference, std::fabs(double(a[i]) - double(b[i])));
  }
  return scale == 0 ? difference : difference / scale;
}

TEST(LazyGraph, ThreadsTrainTheirOwnModelsAtOnceAsEachWouldAlone) {
  // Four threads record, step and read at once; one thread's mark_step()
  // computes what the others have pending (one graph per process), so their
  // steps group differently than alone: equal within float rounding (the
  // same ops, fused in other groups), and never a torn graph.
  compiler::install();
  Tensor shared = from_vector(std::vector<float>(12 * 8, 0.125f), {12, 8});
  constexpr int kThreads = 4, kSteps = 12;
  std::vector<Trained> alone;
  for (int t = 0; t < kThreads; ++t)
    alone.push_back(trainOwnModel(t, shared, kSteps));
  std::vector<Trained> together(kThreads);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        together[t] = trainOwnModel(t, shared, kSteps);
      } catch (const std::exception &e) {
        failures[t] = e.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(failures[t], "") << "thread " << t;
    EXPECT_LT(relativeDifference(together[t].losses, alone[t].losses), 1e-5) << "thread " << t;
    EXPECT_LT(relativeDifference(together[t].weights, alone[t].weights), 1e-5) << "thread " << t;
    // The models differ from each other, so a mixed-up graph would show.
    if (t > 0) {
      EXPECT_GT(relativeDifference(alone[t].weights, alone[0].weights), 1e-2);
    }
  }
}

TEST(LazyGraph, AStepOnOneThreadComputesWhatAnotherThreadRecorded) {
  // Thread B records y = 3x + 1 and leaves it pending; thread A's
  // mark_step() computes it and turns it into data; B then reads it
  // without computing again, and records on top of it.
  compiler::install();
  Session::Use session({.compiler = {.enabled = true, .allow_fallback = false}});
  std::barrier sync(2);
  Tensor y;
  std::vector<float> read;
  std::string failure;
  std::thread other([&] {
    try {
      Session::Use own({.compiler = {.enabled = true, .allow_fallback = false}});
      Tensor x = from_vector(std::vector<float>{1, 2, 3, 4}, {4});
      y = x * 3.0 + 1.0;
      sync.arrive_and_wait(); // recorded
      sync.arrive_and_wait(); // stepped by the other thread
      read = (y * 2.0).to_vector<float>();
    } catch (const std::exception &e) {
      failure = e.what();
    }
  });
  sync.arrive_and_wait();
  EXPECT_NE(lazy::node_of(y)->op, lazy::Op::Data) << "y is pending before the step";
  mark_step();
  EXPECT_EQ(lazy::node_of(y)->op, lazy::Op::Data) << "the step took the other thread's tensor";
  sync.arrive_and_wait();
  other.join();
  ASSERT_EQ(failure, "");
  EXPECT_EQ(read, (std::vector<float>{8, 14, 20, 26}));
}

} // namespace
