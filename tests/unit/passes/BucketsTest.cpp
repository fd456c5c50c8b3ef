//===- BucketsTest.cpp - gradient buckets and their place in the step -----===//
#include "sinter/Passes/Buckets.h"
#include "sinter/Passes/BufferAssignment.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace sinter::planner {
namespace {

using runtime::Program;
using Kind = Program::Step::Kind;

/// Launches over buffers of the given bytes: kernels named k<N> and
/// all-reduces as translation writes them (one input into one output).
struct Builder {
  std::vector<Program::Step> launches;
  std::vector<Program::Buffer> buffers;
  int kernels = 0;

  int buffer(int64_t bytes) {
    buffers.push_back({bytes});
    return static_cast<int>(buffers.size()) - 1;
  }
  void kernel(std::vector<int> inputs, std::vector<int> outputs) {
    Program::Step step;
    step.kernel = kernels++;
    step.inputs = std::move(inputs);
    step.outputs = std::move(outputs);
    step.results = static_cast<int>(step.outputs.size());
    launches.push_back(std::move(step));
  }
  void allReduce(int input, int output, runtime::ReduceOp reduce = runtime::ReduceOp::Mean) {
    Program::Step step;
    step.kind = Kind::AllReduce;
    step.reduce = reduce;
    step.inputs = {input};
    step.outputs = {output};
    step.results = 1;
    step.lines = "train.cpp:" + std::to_string(40 + input);
    launches.push_back(std::move(step));
  }
};

/// The launches in one line: kernels by name, a bucket's start as
/// S(inputs) and its done as D(outputs).
std::string sequence(const std::vector<Program::Step> &launches) {
  std::ostringstream text;
  for (size_t k = 0; k < launches.size(); ++k) {
    const Program::Step &step = launches[k];
    text << (k == 0 ? "" : " ");
    const std::vector<int> *buffers = nullptr;
    if (step.kind == Kind::AllReduce)
      text << "S", buffers = &step.inputs;
    else if (step.kind == Kind::AllReduceDone)
      text << "D", buffers = &step.outputs;
    else if (step.kind == Kind::ReduceScatter)
      text << "R";
    else
      text << "k" << step.kernel;
    if (buffers == nullptr)
      continue;
    text << "(";
    for (size_t j = 0; j < buffers->size(); ++j)
      text << (j == 0 ? "" : ",") << (*buffers)[j];
    text << ")";
  }
  return text.str();
}

/// A backward pass: kernel i writes gradient g_i (`bytes` each), each
/// gradient is all-reduced, and the optimizer's kernels read the reduced
/// gradients after the last one.
Builder backward(int count, int64_t bytes) {
  Builder b;
  int activation = b.buffer(64);
  std::vector<int> grads, reduced;
  for (int i = 0; i < count; ++i) {
    grads.push_back(b.buffer(bytes));
    b.kernel({activation}, {grads.back()});
  }
  for (int i = 0; i < count; ++i) {
    reduced.push_back(b.buffer(bytes));
    b.allReduce(grads[i], reduced.back());
  }
  for (int i = 0; i < count; ++i)
    b.kernel({reduced[i]}, {b.buffer(bytes)});
  return b;
}

TEST(Buckets, GradientsAreBucketedInOrderStartedAfterTheirLastWriterAndDoneBeforeTheFirstReader) {
  // Gradients 1..5 of 40 bytes (buffers 1-5, reduced into 6-10); the first
  // bucket holds up to 80 bytes, the others up to 100.
  Builder b = backward(5, 40);
  std::vector<int> origin = bucketCollectives(
      b.launches, b.buffers, {.firstBucketBytes = 80, .bucketBytes = 100, .inFlight = 4});
  // Bucket 0 (g1, g2) starts after k1 writes g2, bucket 1 (g3, g4) after
  // k3, bucket 2 (g5) after k4; each is waited for right before the first
  // optimizer kernel that reads one of its reduced gradients.
  EXPECT_EQ(sequence(b.launches),
            "k0 k1 S(1,2) k2 k3 S(3,4) k4 S(5) D(6,7) k5 k6 D(8,9) k7 k8 D(10) k9");
  EXPECT_EQ(origin, (std::vector<int>{0, 1, -1, 2, 3, -1, 4, -1, -1, 10, 11, -1, 12, 13, -1, 14}));
  // Each bucket's buffer holds its tensors, and is the start's one output
  // and the done's one input.
  const Program::Step &start = b.launches[2], &done = b.launches[8];
  ASSERT_EQ(start.outputs.size(), 1u);
  EXPECT_EQ(b.buffers[start.outputs[0]].bytes, 80);
  EXPECT_EQ(done.inputs, start.outputs);
  EXPECT_EQ(done.results, 2);
  EXPECT_EQ(start.label, "all_reduce mean bucket 0 of 3 (2 tensors, 80 bytes)");
  EXPECT_EQ(start.lines, "train.cpp:41, train.cpp:42");
}

TEST(Buckets, ABucketNeverSpansAnotherCollectiveAndStartsOnItsSide) {
  // A reduce-scatter recorded between the second and the third all-reduce
  // (of an activation, ready from the start): every rank must start the
  // collectives in that order, so the gradients before it and after it are
  // two buckets, the second started after it, though the third gradient
  // exists before it.
  Builder b = backward(4, 40);
  Program::Step scatter;
  scatter.kind = Kind::ReduceScatter;
  scatter.ranks = 2;
  scatter.inputs = {0};
  scatter.outputs = {b.buffer(32)};
  scatter.results = 1;
  b.launches.insert(b.launches.begin() + 6, scatter);
  bucketCollectives(b.launches, b.buffers,
                    {.firstBucketBytes = 1000, .bucketBytes = 1000, .inFlight = 2});
  EXPECT_EQ(sequence(b.launches), "k0 k1 S(1,2) k2 k3 R S(3,4) D(5,6) k4 k5 D(7,8) k6 k7");
  Builder whole = backward(4, 40);
  bucketCollectives(whole.launches, whole.buffers,
                    {.firstBucketBytes = 1000, .bucketBytes = 1000, .inFlight = 2});
  EXPECT_EQ(sequence(whole.launches), "k0 k1 k2 k3 S(1,2,3,4) D(5,6,7,8) k4 k5 k6 k7");
}

TEST(Buckets, AtMostInFlightBucketsAreStartedAndNotDone) {
  Builder b = backward(5, 40);
  bucketCollectives(b.launches, b.buffers,
                    {.firstBucketBytes = 40, .bucketBytes = 40, .inFlight = 2});
  // One gradient a bucket: the third start waits for the first bucket.
  EXPECT_EQ(sequence(b.launches), "k0 S(1) k1 S(2) k2 D(6) S(3) k3 D(7) S(4) k4 D(8) S(5) k5 k6 "
                                  "k7 D(9) k8 D(10) k9");
  Builder none = backward(3, 40);
  bucketCollectives(none.launches, none.buffers,
                    {.firstBucketBytes = 40, .bucketBytes = 40, .inFlight = 0});
  EXPECT_EQ(sequence(none.launches), "k0 S(1) D(4) k1 S(2) D(5) k2 S(3) D(6) k3 k4 k5");
}

TEST(Buckets, AGradientReadBeforeTheNextIsWrittenClosesItsBucket) {
  // The schedule updates parameter 1 (k2 reads g1's reduction) before k3
  // writes g2: one bucket of both would have to wait after k3.
  Builder b;
  int x = b.buffer(64), g1 = b.buffer(40), g2 = b.buffer(40), r1 = b.buffer(40), r2 = b.buffer(40);
  b.kernel({x}, {g1}); // k0
  b.allReduce(g1, r1);
  b.kernel({r1}, {b.buffer(40)}); // k1: reads the reduced g1
  b.kernel({x}, {g2});            // k2
  b.allReduce(g2, r2);
  b.kernel({r2}, {b.buffer(40)}); // k3
  bucketCollectives(b.launches, b.buffers, {.firstBucketBytes = 1000, .bucketBytes = 1000});
  EXPECT_EQ(sequence(b.launches), "k0 S(1) D(3) k1 k2 S(2) D(4) k3");
}

TEST(Buckets, OtherReductionsAndChainedAllReducesAreBucketsOfTheirOwn) {
  Builder b;
  int x = b.buffer(64), g1 = b.buffer(40), g2 = b.buffer(40), r1 = b.buffer(40), r2 = b.buffer(40);
  b.kernel({x}, {g1, g2});
  b.allReduce(g1, r1, runtime::ReduceOp::Mean);
  b.allReduce(g2, r2, runtime::ReduceOp::Max);
  b.kernel({r1, r2}, {b.buffer(40)});
  bucketCollectives(b.launches, b.buffers, {});
  EXPECT_EQ(sequence(b.launches), "k0 S(1) S(2) D(3) D(4) k1");

  // An all-reduce of a reduced value: every all-reduce stays where it was,
  // waited for at once.
  Builder c;
  int y = c.buffer(64), h = c.buffer(40), once = c.buffer(40), twice = c.buffer(40);
  c.kernel({y}, {h});
  c.kernel({y}, {c.buffer(8)});
  c.allReduce(h, once);
  c.allReduce(once, twice);
  c.kernel({twice}, {c.buffer(40)});
  bucketCollectives(c.launches, c.buffers, {});
  EXPECT_EQ(sequence(c.launches), "k0 k1 S(1) D(2) S(2) D(3) k2");
}

TEST(Buckets, AProgramWithoutCollectivesIsLeftAsItIs) {
  Builder b;
  int x = b.buffer(64);
  b.kernel({x}, {b.buffer(64)});
  std::string before = sequence(b.launches);
  std::vector<int> origin = bucketCollectives(b.launches, b.buffers, {});
  EXPECT_EQ(sequence(b.launches), before);
  EXPECT_EQ(origin, std::vector<int>{0});
  EXPECT_EQ(b.buffers.size(), 2u);
}

TEST(Buckets, TheBucketedProgramIsValidAndPlannedWithTheBucketsInFlight) {
  Builder b = backward(4, 400);
  bucketCollectives(b.launches, b.buffers,
                    {.firstBucketBytes = 800, .bucketBytes = 800, .inFlight = 2});
  Program program;
  program.buffers = b.buffers;
  program.steps = b.launches;
  program.arguments = {0};
  for (int r = 9; r <= 12; ++r) // the optimizer's outputs
    program.results.push_back(r);
  std::string report;
  ASSERT_TRUE(assignBuffers(program, nullptr,
                            {.writesInPlace = [](size_t, unsigned, unsigned) { return false; },
                             .allocationSize = [](int64_t bytes) { return bytes; },
                             .alignment = 16},
                            report)
                  .ok());
  ASSERT_TRUE(validateProgram(program).ok()) << validateProgram(program);
  // While both buckets are in flight (after the second start) the two
  // 800-byte buckets are live beside nothing else of the gradients.
  int first = program.steps[2].outputs[0], second = program.steps[5].outputs[0];
  const Program::Buffer &a = program.buffers[first], &c = program.buffers[second];
  EXPECT_TRUE(a.offset + a.bytes <= c.offset || c.offset + c.bytes <= a.offset)
      << "two buckets in flight at once share bytes";
}

} // namespace
} // namespace sinter::planner
