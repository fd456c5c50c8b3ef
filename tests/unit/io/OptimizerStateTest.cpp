//===- OptimizerStateTest.cpp - saving and restoring training state -------===//
#include "Helpers.h"

#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sinter {
namespace {

using testing::errorOf;
using ::testing::HasSubstr;

/// Three steps of `make`'s optimizer on a small regression; returns the
/// parameter's values after them. With `restartAfter`, a second optimizer
/// (and schedule) over a copy of the parameter takes over from the first's
/// state_dict after that many steps, as a resumed job does.
template <typename Make>
std::vector<float> train(Make make, int restartAfter = -1, bool loadState = true) {
  manual_seed(1);
  Tensor w = randn({4, 3}).requires_grad_();
  Tensor x = randn({5, 4}), y = randn({5, 3});
  auto optimizer = make(w);
  auto schedule = std::make_unique<optim::WarmupCosine>(*optimizer, 2, 6);
  for (int step = 0; step < 5; ++step) {
    if (step == restartAfter) {
      optim::Optimizer::State state = optimizer->state_dict();
      int64_t scheduled = schedule->last_step();
      Tensor copy = from_vector(w.to_vector<float>(), w.shape()).requires_grad_();
      w = copy;
      schedule.reset();
      optimizer = make(w);
      schedule = std::make_unique<optim::WarmupCosine>(*optimizer, 2, 6);
      if (loadState) {
        optimizer->load_state_dict(state);
        schedule->set_last_step(scheduled);
      }
    }
    optimizer->zero_grad();
    Tensor loss = ((matmul(x, w) - y) * (matmul(x, w) - y)).mean();
    loss.backward();
    optimizer->step();
    schedule->step();
    mark_step();
  }
  return w.to_vector<float>();
}

TEST(OptimizerState, ResumingFromTheStateDictEqualsNotStopping) {
  auto adamw = [](Tensor &w) {
    return std::make_unique<optim::AdamW>(std::vector<Tensor>{w}, optim::AdamWOptions{.lr = 0.1});
  };
  auto sgd = [](Tensor &w) {
    return std::make_unique<optim::SGD>(std::vector<Tensor>{w},
                                        optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
  };
  std::vector<float> through = train(adamw);
  EXPECT_EQ(train(adamw, 3), through); // to the bit
  EXPECT_EQ(train(adamw, 0), through); // before any step: the schedule's first rate
  std::vector<float> sgdThrough = train(sgd);
  EXPECT_EQ(train(sgd, 2), sgdThrough);
  // A restart that loses the state (moments, step counts, schedule) lands
  // elsewhere: what the equalities above rule out.
  EXPECT_NE(train(adamw, 3, false), through);
  EXPECT_NE(train(sgd, 2, false), sgdThrough);
}

TEST(OptimizerState, NamesAreTorchsAndBadStateIsRefused) {
  Tensor w = ones({2, 2}).requires_grad_(), b = ones({2}).requires_grad_();
  optim::AdamW adam({w, b});
  EXPECT_TRUE(adam.state_dict().empty()); // nothing stepped yet
  w.set_grad(ones({2, 2}));
  adam.step();
  mark_step();
  optim::Optimizer::State state = adam.state_dict();
  ASSERT_EQ(state.size(), 3u); // b has no gradient: no state
  EXPECT_EQ(state[0].first, "0.step");
  EXPECT_EQ(state[0].second.item<int64_t>(), 1);
  EXPECT_EQ(state[1].first, "0.exp_avg");
  EXPECT_EQ(state[2].first, "0.exp_avg_sq");

  EXPECT_THAT(
      errorOf([&] {
        adam.load_state_dict({{"0.momentum", ones({2, 2})}});
      }),
      HasSubstr("unknown entry '0.momentum' for Adam (expected step, exp_avg, exp_avg_sq)"));
  EXPECT_THAT(errorOf([&] {
                adam.load_state_dict({{"2.exp_avg", ones({2})}});
              }),
              HasSubstr("'2.exp_avg' is not \"<parameter index>.<name>\" with an index below 2"));
  EXPECT_THAT(errorOf([&] {
                adam.load_state_dict({{"1.exp_avg", ones({3})}});
              }),
              HasSubstr("'1.exp_avg' has shape [3] f32, the parameter is [2] f32"));
  EXPECT_THAT(errorOf([&] {
                adam.load_state_dict({{"1.step", full({}, 1.5)}});
              }),
              HasSubstr("'1.step' must be one integer"));
  EXPECT_THAT(errorOf([&] {
                adam.load_state_dict({{"1.exp_avg", ones({2})}});
              }),
              HasSubstr("parameter 1 needs all of step, exp_avg and exp_avg_sq or none"));
  // A refused load leaves the state as it was.
  EXPECT_EQ(adam.state_dict().size(), 3u);

  optim::SGD plain({w});
  EXPECT_THAT(errorOf([&] {
                plain.load_state_dict({{"0.exp_avg", ones({2, 2})}});
              }),
              HasSubstr("unknown entry '0.exp_avg' for SGD (expected momentum_buffer)"));
}

TEST(OptimizerState, TheRandomGeneratorsStateRepeatsItsDraws) {
  manual_seed(5);
  randn({3}).to_vector<float>();
  RngState saved = get_rng_state();
  std::vector<float> first = randn({4}).to_vector<float>();
  randn({4}).to_vector<float>();
  set_rng_state(saved);
  EXPECT_EQ(randn({4}).to_vector<float>(), first);
}

} // namespace
} // namespace sinter
