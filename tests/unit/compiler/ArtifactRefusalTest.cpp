//===- ArtifactRefusalTest.cpp - what an artifact's reader refuses --------===//
//
// Note [Artifacts] (sinter/runtime/Artifact.h) and the C API
// (sinter/runtime/c_api.h): every refusal of an artifact damages exactly one
// thing of a small mlp artifact and checks the message names the file and
// the fix; sessions refuse bad inputs and checkpoints by name; each thread
// has its own last error and sessions run side by side. The artifacts that
// train as the just-in-time path does are AotTest.cpp's.
//
//===----------------------------------------------------------------------===//
#include "AotScratch.h"
#include "ZooArtifact.h"
#include "sinter/runtime/Artifact.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/Files.h"
#include "sinter/runtime/c_api.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

namespace {

using namespace sinter;

/// A small mlp artifact, written once for the tests below.
const std::string &smallArtifact() {
  static const std::string dir = [] {
    tools::ZooArtifactOptions options;
    options.model = "mlp";
    options.batch = 4;
    options.cpu = "x86-64-v3";
    std::string path = scratchPath("small.sinter");
    aot::write_artifact(path, tools::zooArtifact(options));
    return path;
  }();
  return dir;
}

/// A copy of the small artifact with `damage` done to it.
std::string damaged(const std::string &name,
                    const std::function<void(const std::string &)> &damage) {
  std::string dir = scratchPath(name + ".sinter");
  std::filesystem::remove_all(dir);
  std::filesystem::copy(smallArtifact(), dir, std::filesystem::copy_options::recursive);
  damage(dir);
  return dir;
}

/// Edits the manifest of the artifact at `dir`.
void editManifest(const std::string &dir, const std::function<void(nlohmann::json &)> &edit) {
  absl::StatusOr<std::string> text = runtime::readWholeFile(dir + "/manifest.json", "test");
  ASSERT_TRUE(text.ok());
  nlohmann::json manifest = nlohmann::json::parse(*text);
  edit(manifest);
  ASSERT_TRUE(
      runtime::writeFileAtomically(dir + "/manifest.json", {manifest.dump(1)}, "test").ok());
}

TEST(AotArtifact, EachRefusalNamesTheFileAndTheFix) {
  struct Case {
    const char *what;
    std::function<void(const std::string &)> damage;
    int code;
    std::string words;
  };
  const std::vector<Case> cases = {
      {"a newer format version",
       [](const std::string &d) { editManifest(d, [](auto &m) { m["version"] = 2; }); },
       SINTER_ERROR_FAILED_PRECONDITION,
       "format version 2 is newer than this Sinter reads (1): load it with a newer "
       "libsinter_runtime"},
      {"CPU features this CPU lacks",
       [](const std::string &d) {
         editManifest(d, [](auto &m) { m["target"]["features"].push_back("avx10_512_fake"); });
       },
       SINTER_ERROR_FAILED_PRECONDITION,
       "needs CPU features this CPU lacks: avx10_512_fake; compile it again with sinter-compile "
       "--cpu x86-64-v"},
      {"a file whose SHA-256 differs",
       [](const std::string &d) {
         std::string path = d + "/weights.safetensors";
         absl::StatusOr<std::string> bytes = runtime::readWholeFile(path, "test");
         std::string changed = *bytes;
         changed[changed.size() - 1] ^= 1;
         ASSERT_TRUE(runtime::writeFileAtomically(path, {changed}, "test").ok());
       },
       SINTER_ERROR_FAILED_PRECONDITION, "weights.safetensors has SHA-256 "},
      {"a missing shared library",
       [](const std::string &d) {
         editManifest(d, [](auto &m) {
           m["shared_libraries"].push_back(
               {{"soname", "libsinter-missing.so.9"}, {"package", "libsinter-missing9"}});
         });
       },
       SINTER_ERROR_FAILED_PRECONDITION,
       "its kernels need libsinter-missing.so.9, which is not installed: apt install "
       "libsinter-missing9"},
      // Without the simulator: no GPU here, or none of the artifact's
      // architecture (Note [CUDA artifacts]).
      {"a CUDA artifact",
       [](const std::string &d) {
         editManifest(d, [](auto &m) {
           m["target"]["kind"] = "cuda";
           m["cuda"]["architectures"] = {"sm_12"};
         });
       },
       SINTER_ERROR_FAILED_PRECONDITION,
       cuda::deviceCount() > 0 ? "its CUDA code is for sm_12 but cuda:0 ("
                               : "its CUDA code (sm_12) needs a GPU: no CUDA device"},
      {"a CUDA artifact without architectures",
       [](const std::string &d) { editManifest(d, [](auto &m) { m["target"]["kind"] = "cuda"; }); },
       SINTER_ERROR_FAILED_PRECONDITION, "its target is cuda but cuda.architectures names none"},
      {"a missing file",
       [](const std::string &d) { std::filesystem::remove(d + "/predict.program.json"); },
       SINTER_ERROR_FAILED_PRECONDITION,
       "the manifest lists predict.program.json, which is missing: copy the whole artifact"},
      {"no manifest", [](const std::string &d) { std::filesystem::remove(d + "/manifest.json"); },
       SINTER_ERROR_NOT_FOUND, "is not an artifact: it has no manifest.json"},
      {"a manifest that is not JSON",
       [](const std::string &d) {
         ASSERT_TRUE(runtime::writeFileAtomically(d + "/manifest.json", {"{\"format\""}, "t").ok());
       },
       SINTER_ERROR_INVALID_ARGUMENT, "manifest.json: not a JSON document"},
      {"a file outside the artifact",
       [](const std::string &d) {
         editManifest(d, [](auto &m) { m["files"]["../../etc/passwd"] = std::string(64, '0'); });
       },
       SINTER_ERROR_INVALID_ARGUMENT, "files.../../etc/passwd: names a file outside the artifact"},
  };
  for (const Case &c : cases) {
    std::string dir = damaged("refused", c.damage);
    sinter_artifact *artifact = nullptr;
    int code = sinter_artifact_open(dir.c_str(), &artifact);
    EXPECT_EQ(code, c.code) << c.what << ": " << sinter_last_error();
    EXPECT_EQ(artifact, nullptr) << c.what;
    std::string message = sinter_last_error();
    EXPECT_NE(message.find(c.words), std::string::npos)
        << c.what << ": expected \"" << c.words << "\" in\n  " << message;
    EXPECT_NE(message.find(std::filesystem::path(dir).lexically_normal().string()),
              std::string::npos)
        << c.what << ": the message names no file: " << message;
    sinter_artifact_close(artifact);
    std::filesystem::remove_all(dir);
  }
}

TEST(AotArtifact, SessionsRefuseBadInputsAndCheckpointsByName) {
  sinter_artifact *artifact = nullptr;
  ASSERT_EQ(sinter_artifact_open(smallArtifact().c_str(), &artifact), SINTER_OK)
      << sinter_last_error();
  ASSERT_EQ(sinter_artifact_function_count(artifact), 2);
  EXPECT_STREQ(sinter_artifact_function_name(artifact, 0), "predict");
  EXPECT_STREQ(sinter_artifact_function_name(artifact, 1), "train_step");
  EXPECT_EQ(sinter_artifact_function_name(artifact, 2), nullptr);
  sinter_session *train = nullptr, *predict = nullptr;
  EXPECT_EQ(sinter_session_open(artifact, "evaluate", &train), SINTER_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(sinter_last_error())
                .find("has no function 'evaluate'; its functions: "
                      "predict, train_step"),
            std::string::npos)
      << sinter_last_error();
  ASSERT_EQ(sinter_session_open(artifact, "train_step", &train), SINTER_OK) << sinter_last_error();
  ASSERT_EQ(sinter_session_open(artifact, "predict", &predict), SINTER_OK) << sinter_last_error();

  // Introspection: train_step takes input f32[4, 784] and target i64[4].
  ASSERT_EQ(sinter_session_input_count(train), 2);
  std::map<std::string, std::pair<std::string, std::vector<int64_t>>> inputs;
  for (int i = 0; i < 2; ++i) {
    const char *name, *dtype;
    int rank;
    const int64_t *shape;
    size_t bytes;
    ASSERT_EQ(sinter_session_input(train, i, &name, &dtype, &rank, &shape, &bytes), SINTER_OK);
    inputs[name] = {dtype, std::vector<int64_t>(shape, shape + rank)};
  }
  EXPECT_EQ(inputs["input"], (std::pair<std::string, std::vector<int64_t>>{"f32", {4, 784}}));
  EXPECT_EQ(inputs["target"], (std::pair<std::string, std::vector<int64_t>>{"i64", {4}}));
  EXPECT_EQ(sinter_session_input(train, 2, nullptr, nullptr, nullptr, nullptr, nullptr),
            SINTER_ERROR_NOT_FOUND);
  int64_t stepBytes = 0, inputBytes = 0;
  ASSERT_EQ(sinter_session_planned_memory(train, &stepBytes, &inputBytes), SINTER_OK);
  EXPECT_GT(stepBytes, 0);
  EXPECT_GT(inputBytes, 3 * 784 * 256 * 4); // the weights and both moments

  std::vector<float> x(4 * 784, 0.5f);
  std::vector<int64_t> y = {1, 2, 3, 4};
  auto expectRefused = [](int code, int expected, const std::string &words) {
    EXPECT_EQ(code, expected) << sinter_last_error();
    EXPECT_NE(std::string(sinter_last_error()).find(words), std::string::npos)
        << "expected \"" << words << "\" in \"" << sinter_last_error() << "\"";
  };
  expectRefused(sinter_session_run(train), SINTER_ERROR_FAILED_PRECONDITION, "was not set");
  expectRefused(sinter_session_set_input(train, "image", x.data(), x.size() * 4),
                SINTER_ERROR_NOT_FOUND, "the step has no input 'image'; its inputs: ");
  EXPECT_NE(std::string(sinter_last_error()).find("'input' f32[4, 784]"), std::string::npos);
  EXPECT_NE(std::string(sinter_last_error()).find("'target' i64[4]"), std::string::npos);
  expectRefused(sinter_session_set_input(train, "input", x.data(), 100),
                SINTER_ERROR_INVALID_ARGUMENT,
                "input 'input' is f32[4, 784], 12544 bytes; got 100");
  expectRefused(sinter_session_set_input(train, "target", x.data(), 4 * 4),
                SINTER_ERROR_INVALID_ARGUMENT, "input 'target' is i64[4], 32 bytes; got 16");
  expectRefused(sinter_session_set_input(nullptr, "input", x.data(), 1),
                SINTER_ERROR_INVALID_ARGUMENT, "sinter_session_set_input: the session is NULL");
  float loss = 0;
  expectRefused(sinter_session_get_output(train, "loss", &loss, sizeof loss),
                SINTER_ERROR_FAILED_PRECONDITION, "has not run yet");
  ASSERT_EQ(sinter_session_set_input(train, "input", x.data(), x.size() * 4), SINTER_OK);
  ASSERT_EQ(sinter_session_set_input(train, "target", y.data(), y.size() * 8), SINTER_OK);
  ASSERT_EQ(sinter_session_run(train), SINTER_OK) << sinter_last_error();
  ASSERT_EQ(sinter_session_get_output(train, "loss", &loss, sizeof loss), SINTER_OK);
  EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
  expectRefused(sinter_session_get_output(train, "accuracy", &loss, sizeof loss),
                SINTER_ERROR_NOT_FOUND, "the step has no output 'accuracy'; its outputs: 'loss'");
  EXPECT_EQ(sinter_session_step(train), 1);

  // Checkpoints: a training checkpoint loads into predict (its parameters);
  // one that lacks a tensor, or holds one of another shape, is refused and
  // leaves the state as it was.
  std::string checkpoint = scratchPath("small-checkpoint.safetensors");
  ASSERT_EQ(sinter_session_save(train, checkpoint.c_str()), SINTER_OK) << sinter_last_error();
  ASSERT_EQ(sinter_session_load(predict, checkpoint.c_str()), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(sinter_session_step(predict), 1);
  std::string partial = scratchPath("partial.safetensors");
  io::save_safetensors(partial, {{"model.0.weight", zeros({256, 784})}});
  expectRefused(sinter_session_load(train, partial.c_str()), SINTER_ERROR_NOT_FOUND,
                "has no tensor 'model.0.bias', which the step needs (f32[256])");
  io::save_safetensors(partial, {{"model.0.weight", zeros({784, 256})},
                                 {"model.0.bias", zeros({256})},
                                 {"model.2.weight", zeros({10, 256})},
                                 {"model.2.bias", zeros({10})}});
  expectRefused(sinter_session_load(predict, partial.c_str()), SINTER_ERROR_INVALID_ARGUMENT,
                "tensor 'model.0.weight' is F32[784, 256], the step's F32[256, 784]");
  expectRefused(sinter_session_load(train, (checkpoint + ".none").c_str()), SINTER_ERROR_NOT_FOUND,
                "cannot open");
  EXPECT_EQ(sinter_session_step(train), 1) << "a refused load changed the step count";
  // A save into a folder that does not exist leaves nothing behind.
  expectRefused(sinter_session_save(train, "/nonexistent/dir/c.safetensors"), SINTER_ERROR_INTERNAL,
                "cannot create");
  sinter_session_close(predict);
  sinter_session_close(train);
  sinter_artifact_close(artifact);
  std::remove(checkpoint.c_str());
  std::remove(partial.c_str());
}

TEST(AotArtifact, EachThreadHasItsOwnLastErrorAndSessionsRunSideBySide) {
  sinter_artifact *artifact = nullptr;
  ASSERT_EQ(sinter_artifact_open(nullptr, &artifact), SINTER_ERROR_INVALID_ARGUMENT);
  const std::string mine = sinter_last_error();
  ASSERT_EQ(mine, "sinter_artifact_open: the path is NULL");
  ASSERT_EQ(sinter_artifact_open(smallArtifact().c_str(), &artifact), SINTER_OK);
  std::vector<float> losses(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      sinter_session *session = nullptr;
      if (sinter_session_open(artifact, "train_step", &session) != SINTER_OK)
        return;
      std::vector<float> x(4 * 784, 0.25f * (t + 1));
      std::vector<int64_t> y = {0, 1, 2, 3};
      sinter_session_set_input(session, "input", x.data(), x.size() * 4);
      sinter_session_set_input(session, "target", y.data(), y.size() * 8);
      for (int step = 0; step < 3; ++step)
        sinter_session_run(session);
      sinter_session_get_output(session, "loss", &losses[t], sizeof(float));
      // Each thread's own failure, and its own message.
      sinter_session_set_input(session, t == 0 ? "zero" : "one", x.data(), 4);
      errors[t] = sinter_last_error();
      sinter_session_close(session);
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_NE(errors[0].find("no input 'zero'"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("no input 'one'"), std::string::npos) << errors[1];
  EXPECT_TRUE(std::isfinite(losses[0]) && std::isfinite(losses[1]));
  EXPECT_NE(losses[0], losses[1]);
  EXPECT_EQ(sinter_last_error(), mine) << "another thread's message leaked here";
  sinter_artifact_close(artifact);
}

} // namespace
