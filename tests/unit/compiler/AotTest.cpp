//===- AotTest.cpp - an exported step, run by a runtime session ----------===//
//
// Note [Exporting a step] and Note [Step sessions]: a training step exported
// from the just-in-time path and run by runtime::StepSession, from the same
// state and on the same batches, gives the just-in-time path's losses and
// state to the bit, step after step: AdamW under a warmup-cosine schedule
// (the step scalars from their formulas), and a GPT with dropout (the random
// keys from their streams). The session's state goes through a safetensors
// file on the way in and out, and its Program through the file format.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/runtime/ProgramFile.h"
#include "sinter/runtime/StepSession.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

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

std::string scratchPath(const std::string &name) {
  return testing::TempDir() + "/aot-" + std::to_string(getpid()) + "-" + name;
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
  runtime::Schedule rates = schedule != nullptr
                                ? schedule->schedule()
                                : runtime::Schedule{.baseLr = optimizer.lr()};
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
      [&](int k) { return aot::NamedTensors{{"input", xs[k]}, {"target", ys[k]}}; },
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
  models::GPT gpt({.vocab_size = 48, .context = 8, .layers = 1, .heads = 2, .d_model = 16,
                   .dropout = 0.2});
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
      [&](int k) { return aot::NamedTensors{{"input", ids[k]}, {"target", targets[k]}}; },
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

} // namespace
