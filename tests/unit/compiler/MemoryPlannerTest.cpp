//===- MemoryPlannerTest.cpp - packing live buffers into one arena --------===//
#include "sinter/Passes/MemoryPlanner.h"

#include <gtest/gtest.h>

#include <random>

namespace {

using sinter::planner::Live;
using sinter::planner::Plan;
using sinter::planner::planBestFit;
using sinter::planner::verifyPlan;

TEST(MemoryPlanner, BuffersLiveAtOnceDoNotShareBytes) {
  std::vector<Live> buffers = {{100, 0, 2}, {200, 1, 3}, {50, 2, 2}};
  Plan plan = planBestFit(buffers);
  EXPECT_EQ(verifyPlan(buffers, plan), "");
  // All three are live at launch 2: the arena holds all of them, aligned.
  EXPECT_EQ(plan.size, 128 + 256 + 64);
  for (int64_t offset : plan.offsets)
    EXPECT_EQ(offset % 64, 0);
}

TEST(MemoryPlanner, BuffersApartInTimeReuseBytes) {
  // A chain: each buffer dies when the next is written.
  std::vector<Live> chain;
  for (int64_t k = 0; k < 10; ++k)
    chain.push_back({1024, k, k + 1});
  Plan plan = planBestFit(chain);
  EXPECT_EQ(verifyPlan(chain, plan), "");
  EXPECT_EQ(plan.size, 2 * 1024); // two live at a time, never more
}

TEST(MemoryPlanner, BestFitTakesTheSmallestGapThatHolds) {
  // Largest first: 1024 (early) at 0, 512 (long) at 1024, 384 (early) at
  // 1536, 320 (long) at 1920. The late 300-byte buffer sees two gaps,
  // [0, 1024) and [1536, 1920): best fit takes the smaller, where first fit
  // would take offset 0.
  std::vector<Live> buffers = {{1024, 0, 1}, {512, 0, 9}, {384, 0, 1}, {320, 0, 9}, {300, 2, 3}};
  Plan plan = planBestFit(buffers);
  EXPECT_EQ(verifyPlan(buffers, plan), "");
  EXPECT_EQ(plan.offsets[2], 1536);
  EXPECT_EQ(plan.offsets[4], 1536);
  EXPECT_EQ(plan.size, 2240);
}

TEST(MemoryPlanner, VerifierFindsOverlaps) {
  std::vector<Live> buffers = {{100, 0, 2}, {100, 1, 3}};
  Plan bad{{0, 64}, 256};
  EXPECT_NE(verifyPlan(buffers, bad).find("overlap"), std::string::npos);
  Plan outside{{0, 200}, 256};
  EXPECT_NE(verifyPlan(buffers, outside).find("outside"), std::string::npos);
  Plan apart{{0, 128}, 256};
  EXPECT_EQ(verifyPlan(buffers, apart), "");
}

TEST(MemoryPlanner, RandomProgramsPlanWithinTheLowerBound) {
  // The arena is never below the most bytes live at one launch, and every
  // plan verifies.
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Live> buffers;
    int64_t launches = 1 + static_cast<int64_t>(random() % 40);
    for (int k = 0; k < 60; ++k) {
      int64_t first = static_cast<int64_t>(random() % launches);
      int64_t last = first + static_cast<int64_t>(random() % (launches - first));
      buffers.push_back({64 * (1 + static_cast<int64_t>(random() % 32)), first, last});
    }
    Plan plan = planBestFit(buffers);
    ASSERT_EQ(verifyPlan(buffers, plan), "") << "trial " << trial;
    int64_t peak = 0;
    for (int64_t t = 0; t < launches; ++t) {
      int64_t live = 0;
      for (const Live &b : buffers)
        live += b.first <= t && t <= b.last ? b.bytes : 0;
      peak = std::max(peak, live);
    }
    EXPECT_GE(plan.size, peak);
  }
}

} // namespace
