//===- aot_data_parallel.cpp - a data-parallel step, ahead of time ---------===//
//
// One MLP trained with AdamW on fixed random global batches of 2B rows,
// rank r taking rows [rB, (r+1)B) and the gradients averaged over the ranks
// in the step, for tests/e2e/launcher.py's case aot_ranks:
//
//   --export DIR  one process (a world of one): the training step, with
//                 distributed::reduce_gradients after its backward pass,
//                 exported as the artifact DIR (docs/AOT.md, "Many
//                 processes");
//   --jit         under sinter-run with 2 workers: the same steps just in
//                 time, for x86-64-v3 as the artifact's kernels;
//   --run DIR     under sinter-run with 2 workers: the artifact through the
//                 C API alone, each rank's session given its process group
//                 (sinter_process_group_init, sinter_session_set_process_group;
//                 --no-group leaves that out: the step is refused).
//
// Each rank writes its parameters after the last step to OUT.<rank> (raw
// f32, in the model's order) and prints each step's loss averaged over the
// ranks. Exit status 1 with the C API's message when a call fails.
//
//===----------------------------------------------------------------------===//
#include "sinter/Aot.h"
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/runtime/c_api.h"
#include "sinter/sinter.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace sinter;
namespace F = nn::functional;

namespace {

constexpr int64_t kIn = 32, kHidden = 64, kClasses = 10;

struct Mlp : nn::Module {
  Mlp() {
    first = register_module("first", std::make_shared<nn::Linear>(kIn, kHidden));
    second = register_module("second", std::make_shared<nn::Linear>(kHidden, kClasses));
  }
  Tensor forward(const Tensor &x, Loc loc = Loc::current()) override {
    return second->forward(F::relu(first->forward(x, loc), loc), loc);
  }
  std::string type() const override { return "Mlp"; }
  std::shared_ptr<nn::Linear> first, second;
};

/// The global batch of step `step`, the same in every mode and on every
/// rank, and rank `rank`'s rows of it.
std::pair<Tensor, Tensor> batchOf(int step, int rank, int64_t batch) {
  manual_seed(1000 + static_cast<uint64_t>(step));
  Tensor x = randn({2 * batch, kIn});
  Tensor y = (rand({2 * batch}) * double(kClasses)).to(DType::i64);
  return {x.slice(0, rank * batch, (rank + 1) * batch),
          y.slice(0, rank * batch, (rank + 1) * batch)};
}

void write(const std::string &path, const std::vector<std::vector<float>> &tensors) {
  std::ofstream file(path, std::ios::binary);
  for (const std::vector<float> &values : tensors)
    file.write(reinterpret_cast<const char *>(values.data()),
               static_cast<std::streamsize>(values.size() * sizeof(float)));
}

int check(int status, const char *what) {
  if (status != SINTER_OK) {
    std::fprintf(stderr, "%s failed (%d): %s\n", what, status, sinter_last_error());
    std::exit(1);
  }
  return status;
}

/// The artifact's steps through the C API, on this rank's rows.
int runArtifact(const std::string &dir, int steps, int64_t batch, const std::string &out,
                bool withGroup) {
  sinter_process_group *group = nullptr;
  check(sinter_process_group_init(&group), "sinter_process_group_init");
  int rank = sinter_process_group_rank(group);
  int world = sinter_process_group_size(group);
  sinter_artifact *artifact = nullptr;
  sinter_session *train = nullptr;
  check(sinter_artifact_open(dir.c_str(), &artifact), "sinter_artifact_open");
  check(sinter_session_open(artifact, "train_step", &train), "sinter_session_open");
  if (withGroup)
    check(sinter_session_set_process_group(train, group), "sinter_session_set_process_group");
  for (int step = 0; step < steps; ++step) {
    auto [x, y] = batchOf(step, rank, batch);
    std::vector<float> input = x.to_vector<float>();
    std::vector<int64_t> target = y.to_vector<int64_t>();
    check(sinter_session_set_input(train, "input", input.data(), input.size() * sizeof(float)),
          "sinter_session_set_input");
    check(sinter_session_set_input(train, "target", target.data(), target.size() * sizeof(int64_t)),
          "sinter_session_set_input");
    check(sinter_session_run(train), "sinter_session_run");
    float loss = 0;
    check(sinter_session_get_output(train, "loss", &loss, sizeof loss),
          "sinter_session_get_output");
    check(sinter_process_group_all_reduce(group, &loss, 1, "f32", "mean"),
          "sinter_process_group_all_reduce");
    std::printf("step %d loss %.9g\n", step, loss);
  }
  std::vector<std::vector<float>> parameters;
  for (const char *name :
       {"model.first.weight", "model.first.bias", "model.second.weight", "model.second.bias"}) {
    int64_t count = 0;
    for (int i = 0; i < sinter_session_output_count(train); ++i) {
      const char *output = nullptr;
      size_t bytes = 0;
      check(sinter_session_output(train, i, &output, nullptr, nullptr, nullptr, &bytes),
            "sinter_session_output");
      if (std::string(output) == name)
        count = static_cast<int64_t>(bytes / sizeof(float));
    }
    std::vector<float> values(static_cast<size_t>(count));
    check(sinter_session_get_output(train, name, values.data(), values.size() * sizeof(float)),
          name);
    parameters.push_back(std::move(values));
  }
  write(out + "." + std::to_string(rank), parameters);
  sinter_session_close(train);
  sinter_artifact_close(artifact);
  sinter_process_group_destroy(group);
  std::printf("rank %d of %d: done\n", rank, world);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"a data-parallel training step ahead of time, against the same just in time"};
  std::string exportDir, runDir, out;
  bool jit = false, noGroup = false;
  int steps = 20;
  int64_t batch = 16;
  auto *modes = app.add_option_group("mode")->require_option(1);
  modes->add_option("--export", exportDir);
  modes->add_option("--run", runDir);
  modes->add_flag("--jit", jit);
  app.add_option("--steps", steps);
  app.add_option("--batch", batch);
  app.add_option("--out", out);
  app.add_flag("--no-group", noGroup, "with --run: no process group for the session");
  CLI11_PARSE(app, argc, argv);
  compiler::install();
  if (!runDir.empty())
    return runArtifact(runDir, steps, batch, out, !noGroup);

  Session::Use session(
      {.compiler = {.enabled = true, .allow_fallback = false, .cpu = "x86-64-v3"}});
  distributed::init_process_group();
  int rank = distributed::get_rank();
  manual_seed(7);
  Mlp model;
  // The parameters computed before the first step (as in the artifact,
  // whose weights are data).
  mark_step();
  optim::AdamW optimizer(model.parameters(), {.lr = 1e-2});
  if (!exportDir.empty()) {
    auto [x, y] = batchOf(0, 0, batch);
    mark_step(); // the batch is data
    aot::ArtifactRequest request{.dir = exportDir, .cpu = "x86-64-v3"};
    aot::write_artifact(
        exportDir,
        aot::training_artifact(
            {.model = &model,
             .optimizer = &optimizer,
             .batch = {{"input", x}, {"target", y}},
             .loss = [&] { return F::cross_entropy(model(x), y); },
             .after_backward = [&] { distributed::reduce_gradients(model.parameters()); }},
            request));
    std::printf("exported the data-parallel step to %s\n", exportDir.c_str());
    return 0;
  }
  for (int step = 0; step < steps; ++step) {
    auto [x, y] = batchOf(step, rank, batch);
    optimizer.zero_grad();
    Tensor loss = F::cross_entropy(model(x), y);
    loss.backward();
    distributed::reduce_gradients(model.parameters());
    optimizer.step();
    optimizer.zero_grad();
    mark_step();
    // The mean over the ranks in a step of its own, as the C API's caller
    // does: the training step is the artifact's.
    Tensor reported = loss.detach();
    distributed::all_reduce(reported, distributed::ReduceOp::Mean);
    std::printf("step %d loss %.9g\n", step, reported.item<float>());
  }
  std::vector<std::vector<float>> parameters;
  for (const Tensor &p : model.parameters())
    parameters.push_back(p.to_vector<float>());
  write(out + "." + std::to_string(rank), parameters);
  std::printf("rank %d of %d: done\n", rank, distributed::get_world_size());
  return 0;
}
