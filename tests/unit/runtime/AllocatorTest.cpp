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
  allocator.deallocate(a, 10000);
  EXPECT_EQ(allocator.stats().in_use, before.in_use);
  EXPECT_EQ(allocator.stats().cached, size);
  void *b = allocator.allocate(9990); // the same size class: the same block
  EXPECT_EQ(a, b);
  EXPECT_EQ(allocator.stats().cached, 0);
  allocator.reset_peak();
  EXPECT_EQ(allocator.stats().peak_in_use, allocator.stats().in_use);
  allocator.deallocate(b, 9990);
  allocator.release_cache();
  EXPECT_EQ(allocator.stats().cached, 0);
}

} // namespace
