//===- SimtTest.cpp - the CUDA simulator's own semantics ------------------===//
//
// Note [The CUDA simulator]: hand-written CUDA kernels with known results
// (tests/cuda/simt_kernels.cu, which NVRTC and ptxas also compile), run on
// the simulator through the SIMT prelude, in order and in the shuffled
// checking mode: barriers and shared memory, warp shuffles and votes,
// atomics from several workers; and the bugs it must report with the
// kernel's name: a divergent barrier, a warp operation half a warp never
// reaches, a barrier in a kernel launched without fibers, a missing barrier
// (the checking mode), a write out of bounds or after free.
//
//===----------------------------------------------------------------------===//
#include "cuda/simt.h"

#include "simt_kernels.cu"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sys/mman.h>
#include <unistd.h>
// The runtime's switch for detect_stack_use_after_return, which instrumented
// code reads at each function's entry.
extern "C" int __asan_option_detect_stack_use_after_return;
#endif

#include <numeric>
#include <random>
#include <vector>

namespace sinter::simt {
namespace {

using ::testing::HasSubstr;

runtime::LaunchShape shapeOf(int64_t blocks, int64_t threads) {
  runtime::LaunchShape shape;
  shape.grid[0] = blocks;
  shape.block[0] = threads;
  return shape;
}

std::vector<float> randomFloats(size_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> small(-64, 64);
  std::vector<float> values(n);
  for (float &v : values)
    v = static_cast<float>(small(random)) / 4.0f; // sums are exact in any order
  return values;
}

TEST(Simt, BarriersAndSharedMemoryReduceEachBlock) {
  constexpr int kBlocks = 37, kThreads = 256;
  std::vector<float> x = randomFloats(kBlocks * kThreads, 1);
  for (bool shuffled : {false, true}) {
    std::vector<float> sums(kBlocks, -1.0f);
    Options options{.fibers = true, .shuffled = shuffled, .seed = 7};
    Status status = sinter_simulate("block_sum", block_sum, shapeOf(kBlocks, kThreads), options,
                                    x.data(), sums.data());
    ASSERT_TRUE(status.ok()) << status;
    for (int b = 0; b < kBlocks; ++b)
      EXPECT_EQ(sums[b],
                std::accumulate(x.begin() + b * kThreads, x.begin() + (b + 1) * kThreads, 0.0f))
          << "block " << b << (shuffled ? " (shuffled)" : "");
  }
}

TEST(Simt, WarpShufflesAndBallotsAreRendezvousOfTheWarp) {
  constexpr int kBlocks = 5, kThreads = 128;
  std::vector<float> x = randomFloats(kBlocks * kThreads, 2);
  for (bool shuffled : {false, true}) {
    std::vector<float> sums(kBlocks * kThreads / 32, 0);
    std::vector<unsigned> negatives(sums.size(), 99);
    Status status = sinter_simulate("warp_sum", warp_sum, shapeOf(kBlocks, kThreads),
                                    Options{.fibers = true, .shuffled = shuffled, .seed = 3},
                                    x.data(), sums.data(), negatives.data());
    ASSERT_TRUE(status.ok()) << status;
    for (size_t w = 0; w < sums.size(); ++w) {
      float total = 0;
      unsigned count = 0;
      for (int l = 0; l < 32; ++l) {
        total += x[w * 32 + l];
        count += x[w * 32 + l] < 0;
      }
      EXPECT_EQ(sums[w], total) << "warp " << w;
      EXPECT_EQ(negatives[w], count) << "warp " << w;
    }
  }
}

TEST(Simt, SplitMasksAndSegmentsFollowTheGpusRules) {
  constexpr int kThreads = 64;
  std::vector<int> x(kThreads);
  for (int i = 0; i < kThreads; ++i)
    x[i] = (i * 37 + 11) % 101;
  for (bool shuffled : {false, true}) {
    std::vector<int> out(kThreads * 5, -1);
    Status status = sinter_simulate("segments", segments, shapeOf(1, kThreads),
                                    Options{.fibers = true, .shuffled = shuffled, .seed = 9},
                                    x.data(), out.data());
    ASSERT_TRUE(status.ok()) << status;
    for (int i = 0; i < kThreads; ++i) {
      int warp = i / 32 * 32, lane = i % 32, segment = warp + lane / 8 * 8;
      int sum = 0;
      for (int k = 0; k < 8; ++k)
        sum += x[segment + k];
      EXPECT_EQ(out[i * 5 + 0], x[warp + (lane ^ 1)]) << "swapped, thread " << i;
      EXPECT_EQ(out[i * 5 + 1], x[segment]) << "first of segment, thread " << i;
      EXPECT_EQ(out[i * 5 + 2], lane % 8 == 0 ? x[i] : x[i - 1]) << "up, thread " << i;
      EXPECT_EQ(out[i * 5 + 3], sum) << "segment sum, thread " << i;
      EXPECT_EQ(out[i * 5 + 4], x[warp + 31]) << "lane -1, thread " << i;
    }
  }
}

TEST(Simt, AtomicsFromBlocksOnSeveralWorkersCountEveryValue) {
  constexpr int kValues = 100000;
  std::vector<int> values(kValues);
  std::mt19937 random(4);
  for (int &v : values)
    v = static_cast<int>(random() % 1000);
  std::vector<unsigned> expected(16, 0);
  for (int v : values)
    ++expected[v & 15];
  std::vector<unsigned> bins(16, 0);
  Status status = sinter_simulate("histogram", histogram, shapeOf(64, 128), Options{.workers = 4},
                                  values.data(), kValues, bins.data());
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(bins, expected);
}

TEST(Simt, TheCheckingModeFindsAMissingBarrier) {
  std::vector<float> x = randomFloats(256, 5), expected(256, 0.0f);
  for (int t = 1; t < 256; ++t)
    expected[t] = x[t - 1];
  std::vector<float> out(256);
  // With the barrier: right in every order.
  for (uint64_t seed : {1, 2, 3}) {
    ASSERT_TRUE(sinter_simulate("shift_synced", shift_synced, shapeOf(1, 256),
                                Options{.fibers = true, .shuffled = true, .seed = seed}, x.data(),
                                out.data())
                    .ok());
    EXPECT_EQ(out, expected) << "seed " << seed;
  }
  // Without it, in thread order every thread reads a slot written before it
  // ran: right by luck. Shuffled, a thread runs before its neighbour and
  // reads what the slot held before (shared memory is not cleared between
  // blocks, as on the GPU: other inputs, so a stale value shows).
  ASSERT_TRUE(
      sinter_simulate("shift_racy", shift_racy, shapeOf(1, 256), Options{}, x.data(), out.data())
          .ok());
  EXPECT_EQ(out, expected);
  std::vector<float> y = randomFloats(256, 6), shifted(256, 0.0f);
  for (int t = 1; t < 256; ++t)
    shifted[t] = y[t - 1];
  ASSERT_TRUE(sinter_simulate("shift_racy", shift_racy, shapeOf(1, 256),
                              Options{.shuffled = true, .seed = 1}, y.data(), out.data())
                  .ok());
  EXPECT_NE(out, shifted) << "the shuffled order did not expose the missing barrier";
}

TEST(Simt, ADivergentBarrierIsReportedWithTheKernelAndBlock) {
  std::vector<float> x(256, 1.0f), out(256, 0.0f);
  // 200 of 256 threads: the last 56 return before __syncthreads().
  Status status = sinter_simulate("early_return", early_return, shapeOf(1, 256),
                                  Options{.fibers = true}, x.data(), out.data(), 200);
  ASSERT_FALSE(status.ok());
  std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("kernel 'early_return', block (0,0,0): divergent "
                                 "__syncthreads(): thread (0,0,0) waits at a barrier that "
                                 "thread (200,0,0) never reaches"));
  EXPECT_THAT(message, HasSubstr("56 of the block's 256 threads have"));
  // A full block is right.
  ASSERT_TRUE(sinter_simulate("early_return", early_return, shapeOf(1, 256),
                              Options{.fibers = true}, x.data(), out.data(), 256)
                  .ok());
  EXPECT_EQ(out, std::vector<float>(256, 2.0f));
}

TEST(Simt, AShuffleHalfTheWarpNeverReachesIsReported) {
  std::vector<float> x(64, 1.0f);
  Status status = sinter_simulate("half_warp_shuffle", half_warp_shuffle, shapeOf(1, 64),
                                  Options{.fibers = true}, x.data());
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("kernel 'half_warp_shuffle', block (0,0,0): thread (0,0,0) waits in a "
                        "shuffle with mask 0xffffffff, but thread (16,0,0) (lane 16) has "
                        "exited"));
}

TEST(Simt, ABarrierWithoutFibersIsReported) {
  std::vector<float> x(256, 1.0f), sums(1);
  Status status =
      sinter_simulate("block_sum", block_sum, shapeOf(1, 256), Options{}, x.data(), sums.data());
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("kernel 'block_sum', block (0,0,0): thread (0,0,0) reached "
                        "__syncthreads(), but the kernel was launched without fibers"));
}

TEST(Simt, AShapeCudaRefusesIsRefused) {
  std::vector<float> x(1), sums(1);
  Status status = sinter_simulate("block_sum", block_sum, shapeOf(1, 2048), Options{.fibers = true},
                                  x.data(), sums.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("launch of 'block_sum'"));
}

TEST(SimtMemory, AWriteOutOfBoundsOrAfterFreeNamesTheKernel) {
  Memory memory;
  constexpr int kN = 1000;
  auto *out = static_cast<float *>(memory.allocate(kN * sizeof(float)));
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(out) % 256, 0u);
  // In bounds: nothing to say.
  ASSERT_TRUE(
      sinter_simulate("off_by_one", off_by_one, shapeOf(4, 256), Options{}, out, kN - 1).ok());
  EXPECT_TRUE(memory.check("off_by_one").ok());
  // One past the end.
  ASSERT_TRUE(sinter_simulate("off_by_one", off_by_one, shapeOf(4, 256), Options{}, out, kN).ok());
  Status past = memory.check("off_by_one");
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(std::string(past.message()),
              HasSubstr("kernel 'off_by_one' wrote byte 4000 of a 4000-byte block of device "
                        "memory (out of bounds)"));
  EXPECT_TRUE(memory.check("next").ok()) << "a report is made once";
  // After free.
  memory.free(out);
  ASSERT_TRUE(sinter_simulate("off_by_one", off_by_one, shapeOf(1, 32), Options{}, out, 0).ok());
  Status freed = memory.check("off_by_one");
  ASSERT_FALSE(freed.ok());
  EXPECT_THAT(std::string(freed.message()),
              HasSubstr("kernel 'off_by_one' wrote byte 0 of a 4000-byte block of device memory "
                        "after it was freed"));
}

#if defined(__SANITIZE_ADDRESS__)
// The fibers' frames poison redzones in their stacks, and GCC 12's
// AddressSanitizer does not clear the shadow of memory that is unmapped: the
// memory mapped next at those addresses (the leak check's symbolizer maps
// its buffers at exit) was reported as a stack overflow, and the report then
// deadlocked in the symbolizer. The stacks are unpoisoned before they go.
TEST(Simt, TheFibersStacksLeaveNoPoisonWhereTheyWere) {
  constexpr int kThreads = 256;
  Options options{.fibers = true};
  std::vector<float> x(kThreads, 1.0f), sums(1);
  // With detect_stack_use_after_return (the sanitized runs' option) frames
  // live on ASan's fake stacks, which it cleans itself; the kernel's frames
  // are put on the fibers' own stacks for this launch.
  const int fakeStacks = __asan_option_detect_stack_use_after_return;
  __asan_option_detect_stack_use_after_return = 0;
  Status status =
      sinter_simulate("block_sum", block_sum, shapeOf(1, kThreads), options, x.data(), sums.data());
  __asan_option_detect_stack_use_after_return = fakeStacks;
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(sums[0], kThreads);
  // The stacks were unmapped when the launch ended; maps of their size
  // take their addresses again (the kernel reuses the hole they left).
  const std::size_t bytes = options.stackBytes + static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<void *> maps;
  for (int i = 0; i < kThreads; ++i) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    maps.push_back(p);
  }
  int poisoned = 0;
  for (void *p : maps) {
    poisoned += __asan_region_is_poisoned(p, bytes) != nullptr;
    munmap(p, bytes);
  }
  EXPECT_EQ(poisoned, 0) << "of " << kThreads << " fresh maps of a fiber stack's size";
}
#endif

} // namespace
} // namespace sinter::simt
