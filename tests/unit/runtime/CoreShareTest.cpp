//===- CoreShareTest.cpp - OpenMP teams sized to the free cores -----------===//
//
// Note [Sharing the cores] in runtime/include/sinter/runtime/CoreShare.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/CoreShare.h"
#include "common/Spinners.h"

#include <gtest/gtest.h>

#include <sched.h>

#include <chrono>
#include <thread>

namespace {

using namespace sinter::runtime;

TEST(CoreShare, AQuietMachineKeepsTheCallersTeam) {
  EXPECT_EQ(teamFor(2, 2, 2, 0), 2);
  EXPECT_EQ(teamFor(16, 16, 16, 0.3), 16);
}

TEST(CoreShare, AnotherRunnableThreadTakesACoreFromTheTeam) {
  EXPECT_EQ(teamFor(2, 2, 2, 1), 1);
  EXPECT_EQ(teamFor(8, 8, 8, 3), 5);
  // More runnable threads than cores: one thread still runs.
  EXPECT_EQ(teamFor(2, 2, 2, 5), 1);
  EXPECT_EQ(teamFor(4, 4, 4, 4), 1);
}

TEST(CoreShare, TheTeamGrowsBackButNeverPastTheCallers) {
  EXPECT_EQ(teamFor(1, 2, 2, 0), 2);
  EXPECT_EQ(teamFor(1, 4, 16, 0), 4); // OMP_NUM_THREADS=4 on 16 cores
  EXPECT_EQ(teamFor(3, 8, 8, 0.2), 8);
}

TEST(CoreShare, AMachineAtTheEdgeDoesNotFlipTheTeam) {
  // 1.5 free cores: whichever team runs keeps running.
  EXPECT_EQ(teamFor(2, 2, 2, 0.5), 2);
  EXPECT_EQ(teamFor(1, 2, 2, 0.5), 1);
  EXPECT_EQ(teamFor(2, 2, 2, 0.59), 2);
  EXPECT_EQ(teamFor(2, 2, 2, 0.7), 1);
  EXPECT_EQ(teamFor(1, 2, 2, 0.3), 2);
}

TEST(CoreShare, OthersAreTheMachinesRunnableThreadsLessThisProcesss) {
  EXPECT_EQ(othersOf(1, 1, 2, 2), 0);
  EXPECT_EQ(othersOf(3, 2, 2, 2), 1);
  EXPECT_EQ(othersOf(1, 3, 2, 2), 0); // read at two moments: never below 0
  // Allowed 4 of 16 CPUs: a quarter of the others are counted as ours.
  EXPECT_EQ(othersOf(10, 2, 4, 16), 2);
}

TEST(CoreShare, UsableCoresFollowTheAffinityMask) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_GE(usableCores(), 1);
  EXPECT_LE(usableCores(), CPU_COUNT(&all));
  int first = 0;
  while (!CPU_ISSET(first, &all))
    ++first;
  int onOne = 0;
  // A thread of its own, pinned to one CPU, leaves this one's mask alone.
  std::thread pinned([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0)
      onOne = usableCores();
  });
  pinned.join();
  EXPECT_EQ(onOne, 1);
}

TEST(CoreShare, ProcessesSpinningOnEveryCoreLeaveATeamOfOne) {
  CoreShare &share = CoreShare::get();
  ASSERT_TRUE(share.adaptive());
  int cores = share.usable();
  sinter::test_support::Spinners spinners(cores);
  ASSERT_EQ(spinners.size(), static_cast<size_t>(cores));
  CoreShare::Tally before = share.tally();
  // A sample every 5 ms, smoothed: a few samples see them (2 s at most).
  int team = 0;
  for (int i = 0; i < 400 && team != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    team = share.team(std::max(cores, 2));
  }
  EXPECT_EQ(team, 1) << "others " << share.tally().others - before.others << " over "
                     << share.tally().samples - before.samples << " samples";
  CoreShare::Tally after = share.tally();
  EXPECT_GT(after.shrunkRuns, before.shrunkRuns);
  std::optional<std::string> note = share.busyNote(before, after);
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("the machine was busy: other processes kept"), std::string::npos) << *note;
  // No samples between two tallies: nothing to say.
  EXPECT_FALSE(share.busyNote(after, after).has_value());
}

} // namespace
