//===- AotTest.cpp - an exported step, run by a runtime session ----------===//
//
// Note [Exporting a step] and Note [Step sessions]: a training step exported
// from the just-in-time path and run by runtime::StepSession, from the same
// state and on the same batches, gives the just-in-time path's losses and
// state to the bit, step after step: AdamW under a warmup-cosine schedule
// (the step scalars from their formulas), and a GPT with dropout (the random
// keys from their streams). The session's state goes through a safetensors
// file on the way in and out, and its Program through the file format. The
// artifacts: trained through the C API in a bare process, from a program's
// export (part-way, a frozen layer), to the just-in-time path's bits; what
// their reader refuses is ArtifactRefusalTest.cpp's.
//
//===----------------------------------------------------------------------===//
#include "AotScratch.h"
#include "ZooArtifact.h"
#include "ZooTask.h"
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/runtime/Artifact.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Files.h"
#include "sinter/runtime/ProgramFile.h"
#include "sinter/runtime/Safetensors.h"
#include "sinter/runtime/StepSession.h"
#include "sinter/runtime/c_api.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace sinter;
namespace F = nn::functional;

/// Every tensor's bytes, by name.
std::map<std::string, std::vector<uint8_t>> bytesOf(const aot::NamedTensors &tensors) {
  std::map<std::string, std::vector<uint8_t>> bytes;
  for (const auto &[name, tensor] : tensors) {
    std::vector<float> values = tensor.to_vector<float>();
    const auto *begin = reinterpret_cast<const uint8_t *>(values.data());
    bytes[name].assign(begin, begin + values.size() * sizeof(float));
  }
  return bytes;
}

/// The model's parameters and the optimizer's moments, as checkpoints name
/// them (the step count is the session's own).
aot::NamedTensors stateOf(const nn::Module &model, const optim::Optimizer &optimizer) {
  aot::NamedTensors state;
  for (auto &[name, p] : model.named_parameters())
    state.emplace_back("model." + name, p);
  for (auto &[name, t] : optimizer.state_dict())
    if (!name.ends_with(".step"))
      state.emplace_back("optimizer." + name, t);
  return state;
}

/// Trains `model` with `optimizer` (and `schedule`) the just-in-time way for
/// `steps` steps of `recordStep(k)` (which records step k and returns its
/// loss), exporting step 1 on the way, then runs the exported step in a
/// session from the state before step 1 for the same steps: every loss and
/// the final state must be the same bits.
void checkSessionMatchesJit(nn::Module &model, optim::Optimizer &optimizer,
                            optim::LRScheduler *schedule, int steps,
                            const std::function<aot::NamedTensors(int)> &inputsOf,
                            const std::function<Tensor(int)> &recordStep) {
  Session::Use session({.compiler = {.enabled = true, .allow_fallback = false}});
  mark_step();
  recordStep(0);
  if (schedule != nullptr)
    schedule->step();
  mark_step(); // step 0 creates the moments

  // The state before step 1, as a file a session loads.
  std::string before = scratchPath("before.safetensors");
  io::save_safetensors(before, stateOf(model, optimizer));
  aot::StepExport exported([&] { return stateOf(model, optimizer); }, inputsOf(1), /*step=*/1);
  Tensor loss = recordStep(1);
  runtime::Program program = exported.finish({{"loss", loss}});
  if (schedule != nullptr)
    schedule->step();
  mark_step(); // the loss is read after the whole step ran (a read alone computes less)
  std::vector<float> jitLosses = {loss.to_vector<float>()[0]};
  for (int k = 2; k < steps; ++k) {
    Tensor l = recordStep(k);
    if (schedule != nullptr)
      schedule->step();
    mark_step();
    jitLosses.push_back(l.to_vector<float>()[0]);
  }
  std::map<std::string, std::vector<uint8_t>> jitState = bytesOf(stateOf(model, optimizer));

  // The Program through its file, as another process would read it.
  absl::StatusOr<runtime::Program> read =
      runtime::readProgram(runtime::writeProgram(program), "train_step.json");
  ASSERT_TRUE(read.ok()) << read.status();
  runtime::Schedule rates =
      schedule != nullptr ? schedule->schedule() : runtime::Schedule{.baseLr = optimizer.lr()};
  auto opened = runtime::StepSession::open(*read, rates, /*step=*/0);
  ASSERT_TRUE(opened.ok()) << opened.status();
  runtime::StepSession &aot = **opened;
  absl::Status loaded = aot.load(before);
  ASSERT_TRUE(loaded.ok()) << loaded;
  // The file's metadata has no step: the session says which it starts at.
  ASSERT_EQ(aot.step(), 0);
  std::string stepped = scratchPath("stepped.safetensors");
  io::save_safetensors(stepped, {}, {{"step", "1"}});
  // A state file holding only the step count is refused: it lacks tensors.
  absl::Status partial = aot.load(stepped);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.message().find("has no tensor 'model."), std::string::npos) << partial;
  auto reopened = runtime::StepSession::open(*read, rates, /*step=*/1);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  runtime::StepSession &run = **reopened;
  ASSERT_TRUE(run.load(before).ok());
  ASSERT_EQ(run.step(), 1);
  for (int k = 1; k < steps; ++k) {
    for (const auto &[name, tensor] : inputsOf(k)) {
      absl::Status set;
      if (tensor.dtype() == DType::i64) {
        std::vector<int64_t> values = tensor.to_vector<int64_t>();
        set = run.setInput(name, values.data(), values.size() * sizeof(int64_t));
      } else {
        std::vector<float> values = tensor.to_vector<float>();
        set = run.setInput(name, values.data(), values.size() * sizeof(float));
      }
      ASSERT_TRUE(set.ok()) << set;
    }
    absl::Status ran = run.run();
    ASSERT_TRUE(ran.ok()) << "step " << k << ": " << ran;
    float got = 0;
    ASSERT_TRUE(run.output("loss", &got, sizeof got).ok());
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(jitLosses[k - 1]))
        << "step " << k << ": session " << got << ", just in time " << jitLosses[k - 1];
  }
  EXPECT_EQ(run.step(), steps);
  // The state, saved by the session and read by the C++ API, is the
  // just-in-time path's to the byte.
  std::string after = scratchPath("after.safetensors");
  ASSERT_TRUE(run.save(after).ok());
  io::SafetensorsFile saved = io::load_safetensors(after);
  EXPECT_EQ(saved.metadata.at("step"), std::to_string(steps));
  EXPECT_EQ(bytesOf(saved.tensors), jitState);
  for (const std::string &path : {before, stepped, after})
    std::remove(path.c_str());
}

TEST(Aot, AnMlpSessionTrainsAsTheJustInTimePathToTheBit) {
  compiler::install();
  manual_seed(3);
  auto model = models::mlp({.in_features = 20, .hidden = {32}, .num_classes = 5});
  optim::AdamW adamw(model->parameters(), {.lr = 3e-3, .weight_decay = 0.05});
  optim::WarmupCosine schedule(adamw, 5, 40, 1e-4);
  std::vector<Tensor> xs, ys;
  for (int k = 0; k < 50; ++k) {
    xs.push_back(randn({16, 20}));
    std::vector<int64_t> labels;
    for (int i = 0; i < 16; ++i)
      labels.push_back((k * 7 + i * 3) % 5);
    ys.push_back(from_vector<int64_t>(labels, {16}));
  }
  mark_step();
  checkSessionMatchesJit(
      *model, adamw, &schedule, 50,
      [&](int k) {
        return aot::NamedTensors{{"input", xs[k]}, {"target", ys[k]}};
      },
      [&](int k) {
        adamw.zero_grad();
        Tensor loss = F::cross_entropy((*model)(xs[k]), ys[k]);
        loss.backward();
        adamw.step();
        return loss;
      });
}

TEST(Aot, AGptSessionDrawsTheJustInTimePathsDropoutMasks) {
  compiler::install();
  manual_seed(4);
  models::GPT gpt(
      {.vocab_size = 48, .context = 8, .layers = 1, .heads = 2, .d_model = 16, .dropout = 0.2});
  optim::AdamW adamw(gpt.parameters(), {.lr = 1e-2});
  std::vector<Tensor> ids, targets;
  for (int k = 0; k < 12; ++k) {
    std::vector<int64_t> in, out;
    for (int i = 0; i < 16; ++i) {
      in.push_back((k * 5 + i * 11) % 48);
      out.push_back((k * 5 + i * 11 + 1) % 48);
    }
    ids.push_back(from_vector<int64_t>(in, {2, 8}));
    targets.push_back(from_vector<int64_t>(out, {16}));
  }
  mark_step();
  checkSessionMatchesJit(
      gpt, adamw, nullptr, 12,
      [&](int k) {
        return aot::NamedTensors{{"input", ids[k]}, {"target", targets[k]}};
      },
      [&](int k) {
        adamw.zero_grad();
        Tensor loss = F::cross_entropy(gpt(ids[k]).reshape({16, 48}), targets[k]);
        loss.backward();
        adamw.step();
        return loss;
      });
}

TEST(Aot, ATensorNamedNowhereIsRefusedAtItsLine) {
  compiler::install();
  Session::Use session({.compiler = {.enabled = true}});
  manual_seed(5);
  nn::Linear linear(4, 2);
  Tensor x = randn({3, 4});
  Tensor stray = randn({3, 2});
  mark_step();
  aot::StepExport exported([&] { return aot::NamedTensors(linear.named_parameters()); },
                           {{"input", x}}, 0);
  Tensor y = linear.forward(x) + stray;
  try {
    (void)exported.finish({{"y", y}});
    FAIL() << "a step reading an unnamed tensor was exported";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("aot::finish: the step reads a tensor (f32[3, 2], made "
                                         "at AotTest.cpp:"),
              std::string::npos)
        << e.what();
  }
  mark_step();
  Tensor pending = x * 2.0;
  try {
    aot::StepExport late([] { return aot::NamedTensors{}; }, {{"input", pending}}, 0);
    FAIL() << "a pending input was taken";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("input tensor 'input' is pending"), std::string::npos)
        << e.what();
  }
}

/// Every file under `dir` and its bytes.
std::map<std::string, std::string> filesUnder(const std::string &dir) {
  std::map<std::string, std::string> files;
  for (const auto &entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) {
      absl::StatusOr<std::string> bytes = runtime::readWholeFile(entry.path().string(), "test");
      files[std::filesystem::relative(entry.path(), dir).string()] = bytes.ok() ? *bytes : "?";
    }
  return files;
}

/// Runs `argv` in `cwd` with exactly `env`; its exit status (-1 when it ran
/// past 300 s and was killed).
int runIn(const std::string &cwd, const std::vector<std::string> &argv,
          const std::vector<std::string> &env) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0)
      _exit(126);
    std::vector<char *> args, vars;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    for (const std::string &v : env)
      vars.push_back(const_cast<char *>(v.c_str()));
    vars.push_back(nullptr);
    execve(args[0], args.data(), vars.data());
    _exit(127);
  }
  for (int tick = 0; tick < 3000; ++tick) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    usleep(100 * 1000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

/// The NEEDED entries of the shared object or program at `path`.
std::string neededOf(const std::string &path) {
  std::string text;
  FILE *pipe = popen(("readelf -d '" + path + "' 2>&1").c_str(), "r");
  if (pipe == nullptr)
    return text;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr)
    if (std::strstr(line, "NEEDED") != nullptr || std::strstr(line, "PATH") != nullptr)
      text += line;
  pclose(pipe);
  return text;
}

/// One batch of a zoo model's training step: its "input" and "target".
struct Batch {
  Tensor input, target;
};

/// The bytes of `tensor` (f32 or i64).
std::string rawBytes(const Tensor &tensor) {
  if (tensor.dtype() == DType::i64) {
    std::vector<int64_t> v = tensor.to_vector<int64_t>();
    return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(int64_t));
  }
  std::vector<float> v = tensor.to_vector<float>();
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

/// The fraction of rows of `logits` ([rows, classes], flattened) whose
/// largest value is at `targets`' class.
double accuracyOf(const std::vector<float> &logits, const std::vector<int64_t> &targets) {
  const size_t classes = logits.size() / targets.size();
  size_t correct = 0;
  for (size_t r = 0; r < targets.size(); ++r) {
    auto row = logits.begin() + static_cast<std::ptrdiff_t>(r * classes);
    correct +=
        std::max_element(row, row + static_cast<std::ptrdiff_t>(classes)) - row == targets[r];
  }
  return static_cast<double>(correct) / static_cast<double>(targets.size());
}

/// The Done-when of ahead-of-time compilation: the artifact of `options`
/// (built for x86-64-v3) trained for `steps` steps on `batchOf(k)` through
/// the C API (tests/aot/train_artifact.c) in a process with no compiler on
/// its PATH, no CXX, an empty HOME and no kernel cache gives the losses, the
/// state and predict's logits (and so its accuracy) of the just-in-time path
/// from the same weights at the same CPU level; it writes nothing but what
/// it was asked to, and neither it nor libsinter_runtime links MLIR, LLVM or
/// the compiler. batchOf must draw no random numbers: the just-in-time
/// step's dropout takes the generator's streams from where makeZooTask left
/// it, as the artifact's random keys do.
void checkArtifactInABareProcess(const tools::ZooArtifactOptions &options, int steps,
                                 const std::function<Batch(int)> &batchOf) {
  const std::string root = scratchPath("artifact-" + options.model);
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root + "/home");
  std::filesystem::create_directories(root + "/work");
  const std::string dir = root + "/" + options.model + ".sinter";
  aot::write_artifact(dir, tools::zooArtifact(options));
  auto artifact = runtime::Artifact::open(dir);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  std::vector<std::string> inputOrder;
  for (const auto &value : (*artifact)->function("train_step")->signature.arguments)
    if (value.role == runtime::Program::Role::BatchInput)
      inputOrder.push_back(value.name);
  ASSERT_EQ(inputOrder.size(), 2u);
  bool random = false;
  for (const auto &value : (*artifact)->function("train_step")->signature.arguments)
    random = random || value.role == runtime::Program::Role::RandomKey;
  EXPECT_EQ(random, options.dropout > 0) << "random keys exactly when the step drops out";

  // The just-in-time path: the same model and weights (the same seed), AdamW
  // from no state, the same schedule, kernels for the same CPU level (or
  // the same device: a CUDA artifact's on the simulator's cuda:0).
  const bool cuda = !options.cuda_architectures.empty();
  compiler::install();
  Session::Use use({.device = cuda ? Device::cuda(0) : Device::cpu(),
                    .compiler = {.enabled = true, .allow_fallback = false, .cpu = options.cpu}});
  tools::ZooTask task = tools::makeZooTask(options.model, options.batch, options.length,
                                           options.seed, /*imageSize=*/32, options.dropout);
  optim::AdamW adamw(task.model->parameters(),
                     {.lr = options.learning_rate, .weight_decay = options.weight_decay});
  ASSERT_EQ(options.schedule.kind, runtime::Schedule::Kind::WarmupCosine);
  optim::WarmupCosine schedule(adamw, options.schedule.warmupSteps, options.schedule.totalSteps,
                               options.schedule.minLr);
  std::string batches;
  std::vector<float> losses;
  Batch first;
  for (int k = 0; k < steps; ++k) {
    Batch batch = batchOf(k);
    if (k == 0)
      first = batch;
    for (const std::string &name : inputOrder)
      batches += rawBytes(name == "input" ? batch.input : batch.target);
    adamw.zero_grad();
    Tensor logits = (*task.model)(batch.input);
    Tensor loss = F::cross_entropy(logits.reshape({batch.target.numel(), -1}), batch.target);
    loss.backward();
    adamw.step();
    schedule.step();
    mark_step();
    losses.push_back(loss.to_vector<float>()[0]);
  }
  std::vector<float> logits;
  {
    task.model->eval();
    NoGradGuard noGrad;
    Tensor out = (*task.model)(first.input);
    mark_step();
    logits = out.to_vector<float>();
    task.model->train();
  }
  aot::NamedTensors state = tools::modelTensors(*task.model);
  for (auto &[name, t] : adamw.state_dict())
    if (!name.ends_with(".step"))
      state.emplace_back("optimizer." + name, t);
  std::map<std::string, std::vector<uint8_t>> jitState = bytesOf(state);
  ASSERT_TRUE(runtime::writeFileAtomically(root + "/batches.bin", {batches}, "test").ok());

  std::map<std::string, std::string> artifactBefore = filesUnder(dir);
  // Nothing of this process's environment but the sanitizers' options (a
  // sanitized build) and a fixed OpenMP team.
  std::vector<std::string> env = {"PATH=" + root + "/no-such-bin", "HOME=" + root + "/home",
                                  "LANG=C", "SINTER_ADAPTIVE_THREADS=0"};
  if (cuda) {
    // Without the simulator (and without a GPU) the consumer is refused.
    std::vector<std::string> plain = env;
    plain.push_back("SINTER_CUDA_DRIVER=/nonexistent/libcuda.so.1");
    EXPECT_NE(runIn(root + "/work",
                    {AOT_TRAIN_ARTIFACT, dir, root + "/batches.bin", "1", root + "/work/losses.bin",
                     root + "/work/checkpoint.safetensors"},
                    plain),
              0)
        << "a CUDA artifact ran with neither a GPU nor the simulator";
    env.push_back("SINTER_CUDA_SIMULATOR=1");
  }
  for (const char *name :
       {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "OMP_NUM_THREADS"})
    if (const char *value = std::getenv(name))
      env.push_back(std::string(name) + "=" + value);
  int status = runIn(root + "/work",
                     {AOT_TRAIN_ARTIFACT, dir, root + "/batches.bin", std::to_string(steps),
                      root + "/work/losses.bin", root + "/work/checkpoint.safetensors"},
                     env);
  ASSERT_EQ(status, 0) << "the consumer failed (its stderr is above)";

  absl::StatusOr<std::string> written = runtime::readWholeFile(root + "/work/losses.bin", "test");
  ASSERT_TRUE(written.ok());
  ASSERT_EQ(written->size(), (steps + logits.size()) * sizeof(float));
  for (int k = 0; k < steps; ++k) {
    float got;
    std::memcpy(&got, written->data() + k * sizeof(float), sizeof got);
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(losses[k]))
        << options.model << " step " << k << ": artifact " << got << ", just in time " << losses[k];
  }
  std::vector<float> predicted(logits.size());
  std::memcpy(predicted.data(), written->data() + steps * sizeof(float),
              predicted.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(predicted.data(), logits.data(), logits.size() * sizeof(float)), 0)
      << "predict's logits differ";
  std::vector<int64_t> targets = first.target.to_vector<int64_t>();
  double jitAccuracy = accuracyOf(logits, targets), aotAccuracy = accuracyOf(predicted, targets);
  EXPECT_EQ(aotAccuracy, jitAccuracy) << "predict's accuracy on the first batch";
  std::printf("%s: %d steps, last loss %.4f; predict's accuracy on the first batch %.4f "
              "(just in time %.4f)\n",
              options.model.c_str(), steps, losses.back(), aotAccuracy, jitAccuracy);
  io::SafetensorsFile saved = io::load_safetensors(root + "/work/checkpoint.safetensors");
  EXPECT_EQ(saved.metadata.at("step"), std::to_string(steps));
  EXPECT_EQ(saved.metadata.at("format"), runtime::kSessionCheckpointFormat);
  EXPECT_EQ(saved.metadata.at("model"), options.model);
  EXPECT_EQ(bytesOf(saved.tensors), jitState);

  // Nothing written but what it was asked to write.
  EXPECT_TRUE(std::filesystem::is_empty(root + "/home"));
  std::set<std::string> made;
  for (const auto &entry : std::filesystem::directory_iterator(root + "/work"))
    made.insert(entry.path().filename().string());
  EXPECT_EQ(made, (std::set<std::string>{"checkpoint.safetensors", "losses.bin"}));
  EXPECT_EQ(filesUnder(dir), artifactBefore);
  // No MLIR, LLVM or compiler library, in the consumer or the runtime; the
  // kernels' shared libraries by soname.
  EXPECT_NE(neededOf(AOT_TRAIN_ARTIFACT).find("[libsinter_runtime.so]"), std::string::npos)
      << neededOf(AOT_TRAIN_ARTIFACT);
  for (const std::string binary : {AOT_TRAIN_ARTIFACT, SINTER_RUNTIME}) {
    std::string needed = neededOf(binary);
    for (const char *banned : {"MLIR", "LLVM", "sinter_compiler", "libsinter.so", "sinter_graph"})
      EXPECT_EQ(needed.find(banned), std::string::npos)
          << binary << " needs " << banned << ": " << needed;
  }
  // Every shared library the kernels need is in the manifest, by soname
  // (with its package), and nothing is found through this machine's paths
  // but Debian's own folder for OpenBLAS's OpenMP build (CPU kernels; the
  // simulator's build of CUDA kernels links the simulator's library).
  for (const char *function : {"train_step", "predict"}) {
    if (cuda)
      break;
    std::string kernels = neededOf(dir + "/kernels/" + function + ".so");
    for (size_t at = kernels.find("Shared library: ["); at != std::string::npos;
         at = kernels.find("Shared library: [", at + 1)) {
      size_t begin = at + 17, end = kernels.find(']', begin);
      std::string soname = kernels.substr(begin, end - begin);
      bool listed = false;
      for (const auto &library : (*artifact)->sharedLibraries())
        listed = listed || library.soname == soname;
      EXPECT_TRUE(listed) << function << " needs " << soname << ", which the manifest omits";
    }
    size_t runpath = kernels.find("runpath: [");
    if (runpath != std::string::npos) {
      EXPECT_EQ(kernels.substr(runpath + 10, kernels.find(']', runpath) - runpath - 10),
                "/usr/lib/x86_64-linux-gnu/openblas-openmp");
    }
  }
  std::filesystem::remove_all(root);
}

TEST(AotArtifact, TrainsInAProcessWithNoCompilerAsTheJustInTimePathToTheBit) {
  constexpr int kSteps = 50;
  tools::ZooArtifactOptions options;
  options.model = "mlp";
  options.batch = 32;
  options.learning_rate = 2e-3;
  options.weight_decay = 0.01;
  options.cpu = "x86-64-v3";
  options.seed = 9;
  options.schedule = {.kind = runtime::Schedule::Kind::WarmupCosine,
                      .warmupSteps = 5,
                      .totalSteps = kSteps,
                      .minLr = 1e-4};
  checkArtifactInABareProcess(options, kSteps, [&](int k) {
    std::mt19937 generator(100 + k);
    std::normal_distribution<float> normal;
    std::vector<float> pixels(32 * 784);
    for (float &p : pixels)
      p = normal(generator);
    std::vector<int64_t> labels;
    for (int i = 0; i < 32; ++i)
      labels.push_back((k * 13 + i * 7) % 10);
    return Batch{from_vector<float>(pixels, {32, 784}), from_vector<int64_t>(labels, {32})};
  });
}

// Note [CUDA artifacts]: an artifact of a step on cuda:0 holds cubins for
// sm_80 and sm_90 and the simulator's build of the same kernels; in a bare
// process with SINTER_CUDA_SIMULATOR=1 (aot_tests.cuda_simulator) it trains
// as the just-in-time CUDA path on the simulator, to the bit.
TEST(AotArtifactOnTheCudaSimulator, TrainsAsTheJustInTimeCudaPathToTheBit) {
  ASSERT_TRUE(runtime::environment().cuda_simulator)
      << "run with SINTER_CUDA_SIMULATOR=1 (ctest: aot_tests.cuda_simulator)";
  constexpr int kSteps = 12;
  tools::ZooArtifactOptions options;
  options.model = "mlp";
  options.batch = 16;
  options.learning_rate = 2e-3;
  options.seed = 4;
  options.cuda_architectures = {"sm_80", "sm_90", "compute_90"};
  options.schedule = {.kind = runtime::Schedule::Kind::WarmupCosine,
                      .warmupSteps = 3,
                      .totalSteps = kSteps,
                      .minLr = 1e-4};
  checkArtifactInABareProcess(options, kSteps, [&](int k) {
    std::mt19937 generator(300 + k);
    std::normal_distribution<float> normal;
    std::vector<float> pixels(16 * 784);
    for (float &p : pixels)
      p = normal(generator);
    std::vector<int64_t> labels;
    for (int i = 0; i < 16; ++i)
      labels.push_back((k * 5 + i * 3) % 10);
    return Batch{from_vector<float>(pixels, {16, 784}), from_vector<int64_t>(labels, {16})};
  });
}

// A session on a CUDA device keeps its state in the device's memory: after
// the weights are loaded and the batch set, a run copies only its step
// scalars to the device and nothing back; the host reads an output or the
// state only when asked, and a session loaded from its save holds the same
// state. (That the runs compute the just-in-time path's numbers is the test
// above.)
// CompilerConfig::allow_tf32 marks every matrix product of a step compiled
// for a GPU (runtime::Gemm::tf32, what the driver's device gives cuBLAS),
// and the artifact's file keeps the mark; a CPU step's products, and a GPU
// step's without the allowance, stay f32.
TEST(AotArtifactOnTheCudaSimulator, TF32IsMarkedOnAGpuStepsProductsOnlyWhereAllowed) {
  ASSERT_TRUE(runtime::environment().cuda_simulator)
      << "run with SINTER_CUDA_SIMULATOR=1 (ctest: aot_tests.cuda_simulator)";
  // Per product of the artifact's training step, whether it may use TF32.
  auto marks = [](bool allow, bool cuda, const std::string &name) {
    Settings settings = Session::current().settings();
    settings.compiler.allow_tf32 = allow;
    Session::Use use(settings);
    tools::ZooArtifactOptions options;
    options.model = "mlp";
    options.batch = 8;
    if (cuda)
      options.cuda_architectures = {"sm_90"};
    const std::string dir = scratchPath(name) + "/mlp.sinter";
    std::filesystem::remove_all(dir);
    aot::write_artifact(dir, tools::zooArtifact(options));
    auto artifact = runtime::Artifact::open(dir);
    EXPECT_TRUE(artifact.ok()) << artifact.status();
    std::vector<bool> tf32;
    if (artifact.ok())
      for (const runtime::Program::Step &step : (*artifact)->function("train_step")->steps)
        if (step.kind == runtime::Program::Step::Kind::Gemm) {
          tf32.push_back(step.gemm.tf32);
          EXPECT_EQ(runtime::describe(step.gemm).ends_with(" tf32"), step.gemm.tf32);
        }
    return tf32;
  };
  std::vector<bool> allowed = marks(true, true, "tf32-cuda");
  // mlp's two layers: two products forward, three backward (the weights'
  // gradients, and the hidden layer's; none for the input).
  ASSERT_EQ(allowed.size(), 5u);
  EXPECT_EQ(std::count(allowed.begin(), allowed.end(), true),
            static_cast<std::ptrdiff_t>(allowed.size()));
  std::vector<bool> f32 = marks(false, true, "f32-cuda");
  EXPECT_EQ(f32.size(), allowed.size());
  EXPECT_EQ(std::count(f32.begin(), f32.end(), true), 0);
  std::vector<bool> cpu = marks(true, false, "tf32-cpu");
  EXPECT_EQ(cpu.size(), allowed.size());
  EXPECT_EQ(std::count(cpu.begin(), cpu.end(), true), 0);
}

TEST(AotArtifactOnTheCudaSimulator, TheStateStaysOnTheDeviceBetweenRuns) {
  ASSERT_TRUE(runtime::environment().cuda_simulator)
      << "run with SINTER_CUDA_SIMULATOR=1 (ctest: aot_tests.cuda_simulator)";
  tools::ZooArtifactOptions options;
  options.model = "mlp";
  options.batch = 8;
  options.seed = 5;
  options.cuda_architectures = {"sm_90"};
  const std::string dir = scratchPath("resident") + "/mlp.sinter";
  std::filesystem::remove_all(dir);
  compiler::install();
  aot::write_artifact(dir, tools::zooArtifact(options));
  auto artifact = runtime::Artifact::open(dir);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  const runtime::Program &step = *(*artifact)->function("train_step");
  absl::StatusOr<runtime::CudaDevice *> device = runtime::cudaDevice(0);
  ASSERT_TRUE(device.ok()) << device.status();
  runtime::Schedule rates{.baseLr = 1e-3};
  auto opened = runtime::StepSession::open(step, rates, 0, *device);
  ASSERT_TRUE(opened.ok()) << opened.status();
  runtime::StepSession &session = **opened;
  ASSERT_TRUE(session.load({(*artifact)->weightsPath(), (*artifact)->optimizerPath()}).ok());
  int64_t stateBytes = 0, scalarBytes = 0;
  for (size_t a = 0; a < step.signature.arguments.size(); ++a) {
    const runtime::Program::Value &value = step.signature.arguments[a];
    int64_t bytes = step.buffers[step.arguments[a]].bytes;
    if (value.role == runtime::Program::Role::Parameter ||
        value.role == runtime::Program::Role::OptimizerState)
      stateBytes += bytes;
    if (value.role == runtime::Program::Role::StepScalar ||
        value.role == runtime::Program::Role::RandomKey)
      scalarBytes += bytes;
    if (value.role == runtime::Program::Role::BatchInput) {
      std::vector<uint8_t> zeros(static_cast<size_t>(bytes), 0);
      ASSERT_TRUE(session.setInput(value.name, zeros.data(), zeros.size()).ok());
    }
  }
  ASSERT_GT(stateBytes, 100000) << "mlp's weights and AdamW's moments";
  ASSERT_GT(scalarBytes, 0);
  runtime::CudaDevice::Traffic before = (*device)->traffic();
  constexpr int kRuns = 3;
  for (int k = 0; k < kRuns; ++k)
    ASSERT_TRUE(session.run().ok());
  runtime::CudaDevice::Traffic after = (*device)->traffic();
  EXPECT_EQ(after.toDevice - before.toDevice, kRuns * scalarBytes)
      << "each run copies its step scalars in, and nothing else";
  EXPECT_EQ(after.toHost - before.toHost, 0) << "nothing is read back until it is asked for";
  float loss = 0;
  ASSERT_TRUE(session.output("loss", &loss, sizeof loss).ok());
  EXPECT_EQ((*device)->traffic().toHost - after.toHost, static_cast<int64_t>(sizeof loss));
  EXPECT_TRUE(std::isfinite(loss)) << loss;
  // The state read back (and saved) holds the three updates: it differs
  // from the weights it was loaded with, and a session loaded from the save
  // holds it.
  auto firstWeights =
      runtime::parseSafetensors(*runtime::readWholeFile((*artifact)->weightsPath(), "the weights"));
  ASSERT_TRUE(firstWeights.ok()) << firstWeights.status();
  int changed = 0;
  for (const runtime::Program::Value &value : step.signature.arguments) {
    if (value.role != runtime::Program::Role::Parameter)
      continue;
    const runtime::SafetensorsTensor *loaded = firstWeights->find(value.name);
    ASSERT_NE(loaded, nullptr) << value.name;
    std::string_view before = firstWeights->data(*loaded);
    std::string now(before.size(), '\0');
    ASSERT_TRUE(session.output(value.name, now.data(), now.size()).ok());
    changed += now != before;
  }
  EXPECT_GT(changed, 0) << "three AdamW steps changed no parameter";
  const std::string saved = scratchPath("resident") + "/after.safetensors";
  ASSERT_TRUE(session.save(saved).ok());
  auto again = runtime::StepSession::open(step, rates, 0, *device);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE((*again)->load(saved).ok());
  EXPECT_EQ((*again)->step(), kRuns);
  for (const runtime::Program::Value &value : step.signature.arguments) {
    if (value.role != runtime::Program::Role::Parameter)
      continue;
    int64_t bytes = 4;
    for (int64_t d : value.shape)
      bytes *= d;
    std::vector<uint8_t> ours(static_cast<size_t>(bytes)), theirs(ours.size());
    ASSERT_TRUE(session.output(value.name, ours.data(), ours.size()).ok());
    ASSERT_TRUE((*again)->output(value.name, theirs.data(), theirs.size()).ok());
    EXPECT_EQ(ours, theirs) << value.name;
  }
}

TEST(AotArtifact, AGptWithDropoutTrainsInAProcessWithNoCompilerAsTheJustInTimePathToTheBit) {
  // The same for gpt-mini with dropout: the artifact's session draws each
  // step's masks from its random keys (Note [Random keys across steps]) as
  // the just-in-time path draws them; the batches are real text (a
  // license's bytes as tokens, the next byte as the target).
  constexpr int kSteps = 50, kBatch = 2, kLength = 32;
  tools::ZooArtifactOptions options;
  options.model = "gpt-mini";
  options.batch = kBatch;
  options.length = kLength;
  options.learning_rate = 1e-3;
  options.weight_decay = 0.01;
  options.cpu = "x86-64-v3";
  options.seed = 4;
  options.dropout = 0.1;
  options.schedule = {.kind = runtime::Schedule::Kind::WarmupCosine,
                      .warmupSteps = 10,
                      .totalSteps = kSteps,
                      .minLr = 1e-5};
  absl::StatusOr<std::string> text =
      runtime::readWholeFile("/usr/share/common-licenses/GPL-3", "the text");
  ASSERT_TRUE(text.ok()) << text.status();
  const size_t tokens = kBatch * kLength;
  ASSERT_GT(text->size(), (kSteps + 1) * tokens);
  checkArtifactInABareProcess(options, kSteps, [&](int k) {
    std::vector<int64_t> ids, next;
    for (size_t i = 0; i < tokens; ++i) {
      ids.push_back(static_cast<unsigned char>((*text)[k * tokens + i]));
      next.push_back(static_cast<unsigned char>((*text)[k * tokens + i + 1]));
    }
    return Batch{from_vector<int64_t>(ids, {kBatch, kLength}),
                 from_vector<int64_t>(next, {static_cast<int64_t>(tokens)})};
  });
}

/// Batches of 8 rows of 12 normal floats (from `seed`) and their labels.
struct SmallBatches {
  std::vector<std::vector<float>> xs;
  std::vector<std::vector<int64_t>> ys;
};
SmallBatches smallBatches(int count, unsigned seed) {
  SmallBatches data;
  for (int k = 0; k < count; ++k) {
    std::mt19937 generator(seed + k);
    std::normal_distribution<float> normal;
    data.xs.emplace_back(8 * 12);
    for (float &v : data.xs.back())
      v = normal(generator);
    data.ys.emplace_back();
    for (int i = 0; i < 8; ++i)
      data.ys.back().push_back((k * 5 + i * 3) % 4);
  }
  return data;
}

/// Trains the artifact at `dir`'s train_step through the C API on batches
/// [first, first + losses.size()) of `data`, starting at step `first`:
/// each loss must be `losses`' to the bit. Saves the state to `saved`.
void trainThroughTheCApi(const std::string &dir, const SmallBatches &data, int first,
                         const std::vector<float> &losses, const std::string &saved) {
  sinter_artifact *artifact = nullptr;
  sinter_session *run = nullptr;
  ASSERT_EQ(sinter_artifact_open(dir.c_str(), &artifact), SINTER_OK) << sinter_last_error();
  ASSERT_EQ(sinter_artifact_function_count(artifact), 1); // no predict asked for
  ASSERT_EQ(sinter_session_open(artifact, "train_step", &run), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(sinter_session_step(run), first);
  for (size_t j = 0; j < losses.size(); ++j) {
    const std::vector<float> &x = data.xs[first + j];
    const std::vector<int64_t> &y = data.ys[first + j];
    ASSERT_EQ(sinter_session_set_input(run, "input", x.data(), x.size() * 4), SINTER_OK);
    ASSERT_EQ(sinter_session_set_input(run, "target", y.data(), y.size() * 8), SINTER_OK);
    ASSERT_EQ(sinter_session_run(run), SINTER_OK) << sinter_last_error();
    float loss = 0;
    ASSERT_EQ(sinter_session_get_output(run, "loss", &loss, sizeof loss), SINTER_OK);
    EXPECT_EQ(std::bit_cast<uint32_t>(loss), std::bit_cast<uint32_t>(losses[j]))
        << "step " << first + j + 1 << ": session " << loss << ", just in time " << losses[j];
  }
  ASSERT_EQ(sinter_session_save(run, saved.c_str()), SINTER_OK) << sinter_last_error();
  sinter_session_close(run);
  sinter_artifact_close(artifact);
}

TEST(AotArtifact, AnOptimizerPartWayThroughIsExportedAtItsStepCount) {
  // training_artifact from an AdamW that has taken 3 steps under a warmup
  // schedule: the artifact's session starts at step 3 (the bias corrections
  // and the learning rate of step 4 on), and its next steps are those of a
  // process that trains on: losses and state to the bit. A process that
  // trains 3 steps then exports is the first; one that trains 3 + 5, the
  // second. SGD and a missing loss are refused.
  compiler::install();
  constexpr int kBefore = 3, kAfter = 5;
  SmallBatches data = smallBatches(kBefore + kAfter, 40);
  const auto &xs = data.xs;
  const auto &ys = data.ys;
  struct Run {
    std::shared_ptr<nn::Module> model;
    std::unique_ptr<optim::AdamW> adamw;
    std::unique_ptr<optim::LinearWarmup> schedule;
  };
  auto start = [&] {
    manual_seed(11);
    Run run;
    run.model = models::mlp({.in_features = 12, .hidden = {16}, .num_classes = 4});
    run.adamw = std::make_unique<optim::AdamW>(
        run.model->parameters(), optim::AdamWOptions{.lr = 5e-3, .weight_decay = 0.02});
    run.schedule = std::make_unique<optim::LinearWarmup>(*run.adamw, 6);
    return run;
  };
  Session::Use session({.compiler = {.enabled = true, .allow_fallback = false}});
  auto train = [&](Run &run, int k) {
    run.adamw->zero_grad();
    Tensor loss = F::cross_entropy((*run.model)(from_vector<float>(xs[k], {8, 12})),
                                   from_vector<int64_t>(ys[k], {8}));
    loss.backward();
    run.adamw->step();
    run.schedule->step();
    mark_step();
    return loss.to_vector<float>()[0];
  };
  std::vector<float> jitLosses;
  Run jit = start();
  for (int k = 0; k < kBefore + kAfter; ++k) {
    float loss = train(jit, k);
    if (k >= kBefore)
      jitLosses.push_back(loss);
  }
  std::map<std::string, std::vector<uint8_t>> jitState = bytesOf(stateOf(*jit.model, *jit.adamw));

  Run exported = start();
  for (int k = 0; k < kBefore; ++k)
    train(exported, k);
  Tensor x = from_vector<float>(xs[0], {8, 12});
  Tensor y = from_vector<int64_t>(ys[0], {8});
  mark_step();
  aot::ArtifactRequest request{.dir = scratchPath("part-way.sinter")};
  aot::TrainingExport what;
  what.model = exported.model.get();
  what.optimizer = exported.adamw.get();
  what.schedule = exported.schedule->schedule();
  what.batch = {{"input", x}, {"target", y}};
  what.loss = [&] { return F::cross_entropy((*exported.model)(x), y); };
  what.model_name = "small-mlp";
  aot::write_artifact(request.dir, aot::training_artifact(what, request));

  std::string saved = scratchPath("part-way.safetensors");
  ASSERT_NO_FATAL_FAILURE(trainThroughTheCApi(request.dir, data, kBefore, jitLosses, saved));
  io::SafetensorsFile file = io::load_safetensors(saved);
  EXPECT_EQ(file.metadata.at("step"), std::to_string(kBefore + kAfter));
  EXPECT_EQ(file.metadata.at("model"), "small-mlp");
  EXPECT_EQ(bytesOf(file.tensors), jitState);

  // What cannot be exported is refused, naming it.
  Run sgd = start();
  optim::SGD plain(sgd.model->parameters(), {.lr = 0.1, .momentum = 0.9});
  what.model = sgd.model.get();
  what.optimizer = &plain;
  what.loss = [&] { return F::cross_entropy((*sgd.model)(x), y); };
  try {
    (void)aot::training_artifact(what, request);
    FAIL() << "an SGD step was exported";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("training_artifact: the optimizer is sgd; an artifact "
                                         "trains with Adam or AdamW"),
              std::string::npos)
        << e.what();
  }
  what.optimizer = sgd.adamw.get();
  what.loss = nullptr;
  try {
    (void)aot::training_artifact(what, request);
    FAIL() << "an export without a loss was taken";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("give the model, the optimizer and the loss"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(request.dir);
  std::remove(saved.c_str());
}

TEST(AotArtifact, AnOptimizerOfSomeParametersTrainsThemAndLeavesTheRest) {
  // A frozen first layer: AdamW over the last layer's weight and bias only
  // (its state indexed by them). The artifact trains those as a process
  // that trains on does, to the bit, and leaves the first layer's bytes.
  compiler::install();
  constexpr int kSteps = 4;
  SmallBatches data = smallBatches(kSteps, 70);
  const auto &xs = data.xs;
  const auto &ys = data.ys;
  auto start = [&](std::shared_ptr<nn::Module> &model) {
    manual_seed(12);
    model = models::mlp({.in_features = 12, .hidden = {16}, .num_classes = 4});
    std::vector<Tensor> all = model->parameters(), head(all.end() - 2, all.end());
    return std::make_unique<optim::AdamW>(head, optim::AdamWOptions{.lr = 1e-2});
  };
  Session::Use session({.compiler = {.enabled = true, .allow_fallback = false}});
  std::shared_ptr<nn::Module> jit;
  std::unique_ptr<optim::AdamW> jitAdamW = start(jit);
  auto named = jit->named_parameters();
  std::map<std::string, std::vector<uint8_t>> initial =
      bytesOf(aot::NamedTensors(named.begin(), named.end()));
  std::vector<float> losses;
  for (int k = 0; k < kSteps; ++k) {
    jitAdamW->zero_grad();
    Tensor loss = F::cross_entropy((*jit)(from_vector<float>(xs[k], {8, 12})),
                                   from_vector<int64_t>(ys[k], {8}));
    loss.backward();
    jitAdamW->step();
    mark_step();
    losses.push_back(loss.to_vector<float>()[0]);
  }
  std::map<std::string, std::vector<uint8_t>> jitState = bytesOf(stateOf(*jit, *jitAdamW));

  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::AdamW> adamw = start(model);
  Tensor x = from_vector<float>(xs[0], {8, 12});
  Tensor y = from_vector<int64_t>(ys[0], {8});
  mark_step();
  aot::ArtifactRequest request{.dir = scratchPath("frozen.sinter")};
  aot::TrainingExport what;
  what.model = model.get();
  what.optimizer = adamw.get();
  what.batch = {{"input", x}, {"target", y}};
  what.loss = [&] { return F::cross_entropy((*model)(x), y); };
  aot::write_artifact(request.dir, aot::training_artifact(what, request));

  std::string saved = scratchPath("frozen.safetensors");
  ASSERT_NO_FATAL_FAILURE(trainThroughTheCApi(request.dir, data, 0, losses, saved));
  std::map<std::string, std::vector<uint8_t>> state = bytesOf(io::load_safetensors(saved).tensors);
  EXPECT_EQ(state, jitState);
  EXPECT_EQ(state.at("model.0.weight"), initial.at("0.weight")) << "the frozen layer moved";
  EXPECT_NE(state.at("model.2.weight"), initial.at("2.weight")) << "the trained layer did not";
  EXPECT_EQ(state.count("optimizer.1.exp_avg"), 1u);
  EXPECT_EQ(state.count("optimizer.2.exp_avg"), 0u) << "state for a parameter it does not train";
  std::filesystem::remove_all(request.dir);
  std::remove(saved.c_str());
}

} // namespace
