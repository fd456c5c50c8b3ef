//===- DistributedStepTest.cpp - collectives recorded into a step, world of one -===//
//
// Note [Collectives in the step] in sinter/Distributed.h, in a process that
// no launcher started (a world of one): an all-reduce leaves values as they
// are in every mode (compiled, eager, reference), has the gradient it should,
// and what cannot be is refused with the user's line. Two and more ranks:
// tests/e2e/launcher.py (exactness, failures).
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/sinter.h"
#include "unit/frontend/GradCheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using namespace sinter;
using sinter::testing::errorOf;
using ::testing::HasSubstr;
namespace F = nn::functional;

/// A process of its own world: no launcher's variables, the group started.
class DistributedStep : public ::testing::Test {
protected:
  void SetUp() override {
    compiler::install();
    for (const char *name :
         {"RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MASTER_PORT"})
      ::unsetenv(name);
    if (!distributed::is_initialized())
      distributed::init_process_group();
  }
  void TearDown() override { distributed::destroy_process_group(); }
};

const Settings kModes[] = {
    {.compiler = {.enabled = true, .allow_fallback = false}},
    {.compiler = {.enabled = false, .allow_fallback = false}},
    {.compiler = {.use_reference = true}},
};

TEST_F(DistributedStep, AWorldOfOneLeavesValuesAsTheyAreInEveryMode) {
  EXPECT_EQ(distributed::get_world_size(), 1);
  EXPECT_EQ(distributed::get_rank(), 0);
  for (const Settings &settings : kModes) {
    Session::Use session(settings);
    for (auto op : {distributed::ReduceOp::Sum, distributed::ReduceOp::Mean,
                    distributed::ReduceOp::Max, distributed::ReduceOp::Min}) {
      Tensor x = from_vector<float>({1.5f, -2.0f, 3.25f}, {3});
      Tensor other = x; // another handle sees the reduction too
      Tensor y = x * 2.0;
      distributed::all_reduce(y, op);
      distributed::all_reduce(x, op);
      mark_step();
      EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3.0f, -4.0f, 6.5f}));
      EXPECT_EQ(other.to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
    }
    Tensor counts = from_vector<int64_t>({7, -1}, {2});
    distributed::all_reduce(counts, distributed::ReduceOp::Sum);
    EXPECT_EQ(counts.to_vector<int64_t>(), (std::vector<int64_t>{7, -1}));
  }
}

TEST_F(DistributedStep, ReducedGradientsTrainAsWithoutInAWorldOfOne) {
  auto train = [](bool reduce) {
    manual_seed(3);
    nn::Linear layer(4, 3);
    optim::AdamW optimizer(layer.parameters(), {.lr = 0.1});
    for (int step = 0; step < 3; ++step) {
      optimizer.zero_grad();
      manual_seed(100 + step);
      Tensor loss = (layer.forward(randn({5, 4})) * 2.0).sum();
      loss.backward();
      if (reduce)
        distributed::reduce_gradients(layer.parameters());
      optimizer.step();
      mark_step();
    }
    return layer.parameters()[0].to_vector<float>();
  };
  std::vector<float> plain = train(false);
  EXPECT_EQ(train(true), plain);
  EXPECT_NE(plain, std::vector<float>(plain.size(), plain[0])) << "the parameters trained";
}

TEST_F(DistributedStep, TheGradientOfASumOverRanksIsTheSumOfTheGradients) {
  Tensor x = from_vector<float>({1.0f, 2.0f}, {2});
  x.requires_grad_();
  Tensor y = x * 3.0;
  Tensor handle = y;
  distributed::all_reduce(y, distributed::ReduceOp::Sum);
  EXPECT_TRUE(y.requires_grad());
  (y * y).sum().backward();
  mark_step();
  // d/dx sum((3x)^2) = 18x in a world of one.
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{18.0f, 36.0f}));
  EXPECT_EQ(handle.to_vector<float>(), (std::vector<float>{3.0f, 6.0f}));
}

TEST_F(DistributedStep, WhatCannotBeIsRefusedAtTheUsersLine) {
  Tensor x = from_vector<float>({1.0f}, {1});
  x.requires_grad_();
  Tensor y = x * 2.0;
  int line = __LINE__ + 1;
  std::string message = errorOf([&] { distributed::all_reduce(y, distributed::ReduceOp::Max); });
  EXPECT_THAT(message, HasSubstr("a Max or Min over ranks has no gradient"));
  EXPECT_THAT(message, HasSubstr("DistributedStepTest.cpp:" + std::to_string(line)));
  Tensor ints = from_vector<int32_t>({1}, {1});
  EXPECT_THAT(errorOf([&] { distributed::all_reduce(ints, distributed::ReduceOp::Mean); }),
              HasSubstr("a Mean over ranks needs a floating tensor, not i32"));
  EXPECT_THAT(errorOf([] { distributed::init_process_group(); }), HasSubstr("already initialized"));
  distributed::destroy_process_group();
  Tensor z = from_vector<float>({1.0f}, {1});
  EXPECT_THAT(errorOf([&] { distributed::all_reduce(z); }),
              HasSubstr("all_reduce: the process group is not initialized: call "
                        "sinter::distributed::init_process_group() first"));
  EXPECT_THAT(errorOf([] { distributed::barrier(); }), HasSubstr("barrier: the process group"));
  ::setenv("RANK", "x", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  EXPECT_THAT(errorOf([] { distributed::init_process_group(); }),
              HasSubstr("init_process_group: RANK='x' is not a number"));
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  distributed::init_process_group();
  EXPECT_TRUE(distributed::is_initialized());
}

TEST_F(DistributedStep, BroadcastInAWorldOfOneKeepsTheValues) {
  Tensor w = randn({3, 2});
  std::vector<float> before = w.to_vector<float>();
  distributed::broadcast({w});
  EXPECT_EQ(w.to_vector<float>(), before);
  distributed::barrier();
  EXPECT_THAT(errorOf([&] { distributed::broadcast({w}, 1); }),
              HasSubstr("broadcast: rank 1 is not in a world of 1"));
}

} // namespace

namespace {

TEST_F(DistributedStep, ReduceScatterAndAllGatherInAWorldOfOneInEveryMode) {
  for (const Settings &settings : kModes) {
    Session::Use session(settings);
    Tensor x = from_vector<float>({1.5f, -2.0f, 3.25f}, {3});
    Tensor reduced = distributed::reduce_scatter(x * 2.0, distributed::ReduceOp::Mean);
    Tensor gathered = distributed::all_gather(x + 1.0);
    mark_step();
    EXPECT_EQ(reduced.shape(), (Shape{3}));
    EXPECT_EQ(reduced.to_vector<float>(), (std::vector<float>{3.0f, -4.0f, 6.5f}));
    EXPECT_EQ(gathered.to_vector<float>(), (std::vector<float>{2.5f, -1.0f, 4.25f}));
  }
  // Their gradients: each the other's collective (the identity here).
  Tensor x = from_vector<float>({1.0f, 2.0f}, {2});
  x.requires_grad_();
  Tensor y = distributed::all_gather(distributed::reduce_scatter(x * 3.0));
  (y * y).sum().backward();
  mark_step();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{18.0f, 36.0f}));
  // What they take, refused at the user's line.
  Tensor matrix = zeros({2, 2});
  int line = __LINE__ + 1;
  std::string message = errorOf([&] { distributed::reduce_scatter(matrix); });
  EXPECT_THAT(message, HasSubstr("reduce_scatter: needs a 1-D tensor whose length the world size "
                                 "(1) divides, got [2, 2]"));
  EXPECT_THAT(message, HasSubstr("DistributedStepTest.cpp:" + std::to_string(line)));
  EXPECT_THAT(errorOf([&] { distributed::all_gather(matrix); }),
              HasSubstr("all_gather: needs a 1-D tensor, got [2, 2]"));
  Tensor ints = from_vector<int32_t>({1}, {1});
  EXPECT_THAT(errorOf([&] { distributed::reduce_scatter(ints, distributed::ReduceOp::Mean); }),
              HasSubstr("a Mean over ranks needs a floating tensor, not i32"));
  distributed::destroy_process_group();
  EXPECT_THAT(errorOf([&] { distributed::all_gather(ints); }),
              HasSubstr("all_gather: the process group is not initialized"));
}

/// Trains a layer with AdamW (sharded or not) for 4 steps, gradients clipped
/// when `clip`, and returns the parameters and the state_dict's tensors.
std::vector<std::vector<float>> trainAdamW(bool sharded, double clip) {
  manual_seed(3);
  nn::Linear layer(5, 3); // 15 and 3 elements
  optim::AdamW optimizer(layer.parameters(),
                         {.lr = 0.1, .shard_state = sharded, .max_grad_norm = clip});
  for (int step = 0; step < 4; ++step) {
    optimizer.zero_grad();
    manual_seed(100 + step);
    Tensor loss = (layer.forward(randn({6, 5})) * 2.0).sum();
    loss.backward();
    optimizer.step();
    mark_step();
  }
  std::vector<std::vector<float>> all;
  for (const Tensor &p : layer.parameters())
    all.push_back(p.to_vector<float>());
  for (const auto &[name, tensor] : optimizer.state_dict())
    all.push_back(tensor.to_vector<float>());
  return all;
}

TEST_F(DistributedStep, ShardedAdamWTrainsAsAdamWAndItsStateReadsBackWhole) {
  for (double clip : {0.0, 0.5}) {
    std::vector<std::vector<float>> plain = trainAdamW(false, clip);
    EXPECT_EQ(trainAdamW(true, clip), plain) << "max_grad_norm " << clip;
    ASSERT_EQ(plain.size(), 2u + 6u); // 2 parameters; step, exp_avg, exp_avg_sq each
    EXPECT_EQ(plain[3].size(), 15u) << "exp_avg of the weight, whole";
  }
  EXPECT_NE(trainAdamW(false, 0.5)[0], trainAdamW(false, 0.0)[0]) << "the clipping clips";
  // A sharded optimizer takes an unsharded one's state, and gives it back.
  manual_seed(3);
  nn::Linear layer(5, 3);
  optim::AdamW plain(layer.parameters()), sharded(layer.parameters(), {.shard_state = true});
  (layer.forward(ones({2, 5})).sum()).backward();
  plain.step();
  mark_step();
  sharded.load_state_dict(plain.state_dict());
  optim::Optimizer::State back = sharded.state_dict(), original = plain.state_dict();
  ASSERT_EQ(back.size(), original.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].first, original[i].first);
    EXPECT_EQ(back[i].second.shape(), original[i].second.shape()) << back[i].first;
    EXPECT_EQ(back[i].second.to_vector<double>(), original[i].second.to_vector<double>())
        << back[i].first;
  }
}

// Note [What the IR's dataflow does not know]: under a memory budget the
// rematerialization pass estimates a data-parallel step's arena with its
// gradient buckets (each bucket's buffer from its start to its done), as
// buffer assignment plans it: the estimate is the plan, so the passes run
// once. Without the buckets in it, this step's estimate was 1182016 bytes
// against a plan of 1315392, so a budget between the two passed the pass's
// check and sent the pipeline round again (Note [Fitting a memory budget]).
TEST_F(DistributedStep, ABudgetedStepWithGradientBucketsIsEstimatedAsPlanned) {
  auto planned = [](int64_t budget) {
    Session::Use session(
        {.compiler = {.enabled = true, .memory_budget = budget, .allow_fallback = false}});
    manual_seed(5);
    // Gradients (0.6 MiB) far above the activations (batch 4), and SGD's
    // updates written in place: the buckets are what the peak holds.
    nn::Linear first(256, 512), second(512, 64);
    std::vector<Tensor> params = first.parameters();
    for (const Tensor &p : second.parameters())
      params.push_back(p);
    mark_step();
    optim::SGD optimizer(params, {.lr = 1e-2});
    Tensor x = randn({4, 256});
    Tensor y = (rand({4}) * 64.0).to(DType::i64);
    mark_step();
    Tensor loss = F::cross_entropy(second.forward(F::relu(first.forward(x))), y);
    loss.backward();
    distributed::reduce_gradients(params);
    optimizer.step();
    optimizer.zero_grad();
    return plan_step();
  };
  StepMemory free = planned(0);
  ASSERT_GT(free.arena_bytes, 0);
  // Nothing to trade in a step this small: the plan is the unbudgeted one.
  for (int64_t budget : {int64_t{1}, free.arena_bytes * 19 / 20}) {
    StepMemory memory = planned(budget);
    EXPECT_EQ(memory.estimated_arena_bytes, memory.arena_bytes) << "budget " << budget;
    EXPECT_EQ(memory.pipeline_runs, 1) << "budget " << budget;
  }
}

} // namespace
