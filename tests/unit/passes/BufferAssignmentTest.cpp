//===- BufferAssignmentTest.cpp - donation, in-place reuse, the arena -----===//
#include "sinter/Passes/BufferAssignment.h"

#include <gtest/gtest.h>

namespace sinter::planner {
namespace {

using runtime::Program;

/// A program over buffers of the given sizes; launches are added by the test.
Program programOf(std::vector<int64_t> bytes, std::vector<int> arguments, std::vector<int> results) {
  Program program;
  for (int64_t b : bytes)
    program.buffers.push_back({b});
  program.arguments = std::move(arguments);
  program.results = std::move(results);
  return program;
}

void launch(Program &program, std::vector<int> inputs, std::vector<int> outputs, int results = -1,
            std::vector<int64_t> offsets = {}) {
  Program::Step l;
  l.kernel = static_cast<int>(launchesOf(program).size());
  l.inputs = std::move(inputs);
  l.outputs = std::move(outputs);
  l.results = results < 0 ? static_cast<int>(l.outputs.size()) : results;
  l.inputOffsets = std::move(offsets);
  l.label = "k" + std::to_string(l.kernel);
  program.steps.push_back(std::move(l));
}

/// Every kernel may write any result over any input, blocks take their bytes
/// rounded up to 64.
AssignmentRules permissive() {
  return {.writesInPlace = [](size_t, unsigned, unsigned) { return true; },
          .allocationSize = [](int64_t bytes) { return (bytes + 63) / 64 * 64; },
          .alignment = 64};
}

AssignmentRules noInPlace() {
  AssignmentRules rules = permissive();
  rules.writesInPlace = [](size_t, unsigned, unsigned) { return false; };
  return rules;
}

TEST(BufferAssignment, AnUpdateIsWrittenIntoTheParameterItReadsLast) {
  // p (arg 0), g (arg 1) -> update -> p' (result 0)
  Program program = programOf({256, 256, 256}, {0, 1}, {2});
  launch(program, {0, 1}, {2});
  std::vector<bool> donatable = {true, false};
  std::string report;
  ASSERT_TRUE(assignBuffers(program, &donatable, permissive(), report).ok());
  EXPECT_EQ(program.donors, std::vector<int>({0}));
  EXPECT_EQ(program.arenaBytes, 0);
  EXPECT_EQ(program.inArena, std::vector<bool>({false}));
  EXPECT_NE(report.find("result 0 is written into argument 0 (256 bytes, donated)"),
            std::string::npos)
      << report;
}

TEST(BufferAssignment, NoDonationWhenTheKernelReadsTheParameterElsewhere) {
  Program program = programOf({256, 256, 256}, {0, 1}, {2});
  launch(program, {0, 1}, {2});
  std::vector<bool> donatable = {true, true};
  std::string report;
  ASSERT_TRUE(assignBuffers(program, &donatable, noInPlace(), report).ok());
  EXPECT_EQ(program.donors, std::vector<int>({-1}));
  EXPECT_EQ(program.inArena, std::vector<bool>({true}));
  EXPECT_EQ(program.arenaBytes, 256);
}

TEST(BufferAssignment, AnArgumentReadAfterTheWriterIsNotDonated) {
  // k0 writes the result from arg 0; k1 reads arg 0 again afterwards.
  Program program = programOf({256, 256, 64}, {0}, {1});
  launch(program, {0}, {1});
  launch(program, {0}, {2});
  std::vector<bool> donatable = {true};
  std::string report;
  ASSERT_TRUE(assignBuffers(program, &donatable, permissive(), report).ok());
  EXPECT_EQ(program.donors, std::vector<int>({-1}));
}

TEST(BufferAssignment, AnArgumentTheStepReturnsIsNotDonated) {
  Program program = programOf({256, 256}, {0}, {1, 0});
  launch(program, {0}, {1});
  std::vector<bool> donatable = {true};
  std::string report;
  ASSERT_TRUE(assignBuffers(program, &donatable, permissive(), report).ok());
  EXPECT_EQ(program.donors, std::vector<int>({-1, -1}));
}

TEST(BufferAssignment, AChainOfKernelsWritesEachStageOverTheLast) {
  // x -> a -> b -> c -> (reduced) r; a, b, c the same size, each read last by
  // the next kernel: one buffer for the three.
  Program program = programOf({1024, 1024, 1024, 1024, 64}, {0}, {4});
  launch(program, {0}, {1});
  launch(program, {1}, {2});
  launch(program, {2}, {3});
  launch(program, {3}, {4});
  std::string report;
  ASSERT_TRUE(assignBuffers(program, nullptr, permissive(), report).ok());
  EXPECT_EQ(program.buffers[1].offset, program.buffers[2].offset);
  EXPECT_EQ(program.buffers[2].offset, program.buffers[3].offset);
  EXPECT_EQ(program.arenaBytes, 1024 + 64);
  EXPECT_NE(report.find("buffer 3 is written over buffer 2 (1024 bytes, in place)"),
            std::string::npos)
      << report;
  // Without in-place kernels, two stages are live at once (the reduction's
  // result then fits where the first stage was).
  Program apart = programOf({1024, 1024, 1024, 1024, 64}, {0}, {4});
  apart.steps = program.steps;
  ASSERT_TRUE(assignBuffers(apart, nullptr, noInPlace(), report).ok());
  EXPECT_EQ(apart.arenaBytes, 2 * 1024);
}

TEST(BufferAssignment, AViewAtAnOffsetIsNeverWrittenOver) {
  // k1 reads buffer 1 at byte 256 (a slice): its result cannot share it.
  Program program = programOf({1024, 1024, 768, 64}, {0}, {3});
  launch(program, {0}, {1});
  program.buffers[2].bytes = 1024;
  launch(program, {1}, {2}, -1, {256});
  launch(program, {2}, {3});
  std::string report;
  ASSERT_TRUE(assignBuffers(program, nullptr, permissive(), report).ok());
  EXPECT_NE(program.buffers[1].offset, program.buffers[2].offset);
  EXPECT_EQ(report.find("written over buffer 1"), std::string::npos) << report;
}

TEST(BufferAssignment, ResultsInTheArenaTakeTheirSizeClassAndOffsetsTheAlignment) {
  // Two results of 100 bytes each, written by two kernels; the device's
  // blocks come in 512-byte classes and offsets in 256-byte steps.
  Program program = programOf({64, 100, 100}, {0}, {1, 2});
  launch(program, {0}, {1});
  launch(program, {0}, {2});
  AssignmentRules rules = noInPlace();
  rules.allocationSize = [](int64_t bytes) { return (bytes + 511) / 512 * 512; };
  rules.alignment = 256;
  std::string report;
  ASSERT_TRUE(assignBuffers(program, nullptr, rules, report).ok());
  EXPECT_EQ(program.inArena, std::vector<bool>({true, true}));
  EXPECT_EQ(program.arenaBytes, 1024);
  for (int b : {1, 2})
    EXPECT_EQ(program.buffers[b].offset % 256, 0) << b;
}

TEST(BufferAssignment, ThePeakNamesTheLaunchThatWritesItsLargestBuffer) {
  Program program = programOf({64, 4096, 64}, {0}, {2});
  launch(program, {0}, {1});
  program.steps[0].label = "matmul f32[32x32] <- model.cpp:40";
  launch(program, {1}, {2});
  std::string report;
  ASSERT_TRUE(assignBuffers(program, nullptr, noInPlace(), report).ok());
  ASSERT_FALSE(program.report.peakUses.empty());
  EXPECT_EQ(program.report.peakUses[0].line, "model.cpp:40");
  EXPECT_EQ(program.report.peakUses[0].bytes, 4096);
  EXPECT_EQ(program.report.peakUses[0].example, "matmul f32[32x32]");
}

TEST(BufferAssignment, TheArenaIsTheDataflowsPackedArena) {
  // Note [One memory model]: the arena buffer assignment plans is what the
  // Dataflow of the same program packs into, as the rematerialization pass
  // simulates it: a scratch buffer, a result written over its input, a
  // constant filled before its reader, an update donated to its parameter
  // and a result handed out of the arena in its size class.
  // x (arg 0), p (arg 1) -> k0: a (+ scratch) -> k1: b over a, reading the
  // constant c -> k2: p' (into p) and the loss (in the arena).
  Program program = programOf({256, 256, 256, 512, 64, 256, 256, 4}, {0, 1}, {6, 7});
  launch(program, {0}, {2, 3}, /*results=*/1);
  launch(program, {2, 4}, {5});
  launch(program, {5, 1}, {6, 7});
  // The constant's fill is a step of its own, before k1: launches are
  // counted without it.
  Program::Step fill;
  fill.kind = Program::Step::Kind::Fill;
  fill.outputs = {4};
  fill.element = {0};
  program.steps.insert(program.steps.begin() + 1, fill);
  std::vector<bool> donatable = {false, true};
  std::string report;
  ASSERT_TRUE(assignBuffers(program, &donatable, permissive(), report).ok());
  EXPECT_NE(report.find("buffer 5 is written over buffer 2"), std::string::npos) << report;
  EXPECT_EQ(program.donors, (std::vector<int>{1, -1}));
  Dataflow flow = dataflowOf(program, permissive());
  std::vector<int> order = {0, 1, 2};
  EXPECT_EQ(program.arenaBytes, packedArena(flow, order));
  // While k0 runs: a and its scratch; then a (b over it) and c; then b
  // and the loss in its size class (64).
  EXPECT_EQ(liveBytes(flow, order), (std::vector<int64_t>{768, 320, 320}));
  EXPECT_EQ(program.arenaBytes, 768);
}

} // namespace
} // namespace sinter::planner
