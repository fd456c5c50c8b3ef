//===- AllocatorTest.cpp - the caching host allocator ---------------------===//
#include "sinter/runtime/Allocator.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using sinter::runtime::HostAllocator;

TEST(HostAllocator, SizeClassesAreAlignedAndClose) {
  for (int64_t bytes : {1, 63, 64, 65, 500, 513, 4096, 100000, 1 << 24}) {
    int64_t size = HostAllocator::size_class(bytes);
    EXPECT_EQ(size % 64, 0) << bytes;
    EXPECT_GE(size, bytes);
    EXPECT_LE(size, std::max<int64_t>(64, bytes + bytes / 8 + 64)) << bytes;
  }
}

TEST(HostAllocator, ReusesFreedBlocksAndCountsThem) {
  HostAllocator &allocator = HostAllocator::get();
  allocator.release_cache();
  HostAllocator::Stats before = allocator.stats();
  void *a = allocator.allocate(10000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  int64_t size = HostAllocator::size_class(10000);
  EXPECT_EQ(allocator.stats().in_use, before.in_use + size);
  allocator.deallocate(a);
  EXPECT_EQ(allocator.stats().in_use, before.in_use);
  EXPECT_EQ(allocator.stats().cached, size);
  void *b = allocator.allocate(9990); // the same size class: the same block
  EXPECT_EQ(a, b);
  EXPECT_EQ(allocator.stats().cached, 0);
  allocator.reset_peak();
  EXPECT_EQ(allocator.stats().peak_in_use, allocator.stats().in_use);
  allocator.deallocate(b);
  allocator.release_cache();
  EXPECT_EQ(allocator.stats().cached, 0);
}

TEST(HostAllocator, FreedNeighboursMergeAndBestFitSplits) {
  HostAllocator &allocator = HostAllocator::get();
  allocator.release_cache();
  int64_t before = allocator.stats().in_use;
  auto *block = static_cast<uint8_t *>(allocator.allocate(1 << 20));
  ASSERT_NE(block, nullptr);
  // Parts of the block become blocks of their own; the gaps are freed.
  allocator.split(block, {{64, 128}, {4096, 1024}});
  EXPECT_EQ(allocator.stats().in_use, before + 128 + 1024);
  EXPECT_EQ(allocator.stats().cached, (1 << 20) - 128 - 1024);
  // A request the first gap (64 bytes) cannot hold takes the best fit: the
  // gap between the parts, 3904 bytes, for 2048 (its size class: 2048).
  void *between = allocator.allocate(2048);
  EXPECT_EQ(between, block + 192);
  allocator.deallocate(between);
  // A small request does not cut the large free tail (more than twice its size).
  void *small = allocator.allocate(64);
  EXPECT_EQ(small, block); // the 64-byte gap at the start: an exact fit
  allocator.deallocate(small);
  allocator.deallocate(block + 64);
  allocator.deallocate(block + 4096);
  // Whole again: the next request of the block's size takes the same memory.
  EXPECT_EQ(allocator.stats().in_use, before);
  EXPECT_EQ(allocator.stats().cached, 1 << 20);
  void *again = allocator.allocate(1 << 20);
  EXPECT_EQ(again, block);
  allocator.deallocate(again);
  allocator.release_cache();
  EXPECT_EQ(allocator.stats().cached, 0);
}

TEST(HostAllocator, ASegmentInUseIsNotReleased) {
  HostAllocator &allocator = HostAllocator::get();
  allocator.release_cache();
  auto *block = static_cast<uint8_t *>(allocator.allocate(1 << 16));
  allocator.split(block, {{1024, 64}});
  allocator.release_cache(); // the segment holds a part in use: kept
  EXPECT_EQ(allocator.stats().cached, (1 << 16) - 64);
  allocator.deallocate(block + 1024);
  allocator.release_cache();
  EXPECT_EQ(allocator.stats().cached, 0);
}

TEST(HostAllocatorDeathTest, FreeingWhatIsNotABlockAborts) {
  HostAllocator &allocator = HostAllocator::get();
  auto *block = static_cast<uint8_t *>(allocator.allocate(256));
  EXPECT_DEATH(allocator.deallocate(block + 64),
               "freeing 0x[0-9a-f]+, which is not an allocated block");
  EXPECT_DEATH(allocator.split(block + 64, {}),
               "splitting 0x[0-9a-f]+, which is not an allocated block");
  EXPECT_DEATH(allocator.split(block, {{32, 64}}), "part \\[32, \\+64\\)");
  allocator.deallocate(block);
  EXPECT_DEATH(allocator.deallocate(block), "not an allocated block");
}

} // namespace
