//===- AllocatorTest.cpp - the caching host allocator ---------------------===//
#include "sinter/runtime/Allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

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

TEST(HostAllocator, RandomRequestsNeverOverlapAndMergeBackWhole) {
  // Random allocations, frees and splits: blocks in use never share a byte,
  // each keeps what was written into it, the counts add up, and once all is
  // freed every segment is one free block again (release_cache returns all).
  HostAllocator &allocator = HostAllocator::get();
  allocator.release_cache();
  int64_t before = allocator.stats().in_use;
  std::mt19937_64 random(17);
  // A block's size (its size class, or a part's bytes) and the bytes its
  // owner may touch: those asked for (Note [Poisoned arenas]).
  struct Held {
    uint8_t *base;
    int64_t size;
    int64_t usable;
    uint8_t mark;
  };
  std::vector<Held> held;
  int64_t inUse = 0;
  auto keep = [&](uint8_t *base, int64_t size, int64_t usable) {
    auto mark = static_cast<uint8_t>(random());
    std::memset(base, mark, static_cast<size_t>(usable));
    held.push_back({base, size, usable, mark});
    inUse += size;
  };
  for (int op = 0; op < 4000; ++op) {
    uint64_t choice = random() % 10;
    if (choice < 5 || held.empty()) {
      int64_t bytes = 1 + static_cast<int64_t>(random() % (choice == 0 ? (1 << 20) : 4096));
      auto *block = static_cast<uint8_t *>(allocator.allocate(bytes));
      ASSERT_NE(block, nullptr);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(block) % 64, 0u);
      keep(block, HostAllocator::size_class(bytes), bytes);
    } else if (choice < 9) {
      size_t i = random() % held.size();
      inUse -= held[i].size;
      allocator.deallocate(held[i].base);
      held[i] = held.back();
      held.pop_back();
    } else {
      // Split the newest block into up to three parts of whole cache lines.
      Held whole = held.back();
      held.pop_back();
      inUse -= whole.size;
      std::vector<HostAllocator::Part> parts;
      int64_t at = 0, lines = whole.size / 64;
      for (int k = 0; k < 3 && at < lines; ++k) {
        int64_t start = at + static_cast<int64_t>(random() % (lines - at));
        int64_t count = 1 + static_cast<int64_t>(random() % (lines - start));
        parts.push_back({start * 64, count * 64});
        at = start + count;
      }
      allocator.split(whole.base, parts);
      for (const HostAllocator::Part &part : parts)
        keep(whole.base + part.offset, part.bytes,
             std::clamp<int64_t>(whole.usable - part.offset, 0, part.bytes));
    }
    ASSERT_EQ(allocator.stats().in_use, before + inUse) << "after operation " << op;
  }
  std::sort(held.begin(), held.end(), [](const Held &a, const Held &b) { return a.base < b.base; });
  for (size_t i = 0; i < held.size(); ++i) {
    if (i > 0) {
      ASSERT_LE(held[i - 1].base + held[i - 1].size, held[i].base) << "blocks overlap";
    }
    for (int64_t b = 0; b < held[i].usable; ++b)
      ASSERT_EQ(held[i].base[b], held[i].mark) << "a block was written by another's owner";
  }
  for (const Held &h : held)
    allocator.deallocate(h.base);
  EXPECT_EQ(allocator.stats().in_use, before);
  allocator.release_cache();
  EXPECT_EQ(allocator.stats().cached, 0) << "a segment did not merge back into one free block";
}

TEST(HostAllocator, ThreadsAllocatingAtOnceNeverShareABlock) {
  // One allocator serves every thread of the process (the runtime's, and a
  // user's that run executables side by side): blocks handed out at once to
  // different threads never share a byte, and the counts add up after.
  HostAllocator &allocator = HostAllocator::get();
  allocator.release_cache();
  int64_t before = allocator.stats().in_use;
  constexpr int kThreads = 4, kOperations = 3000;
  std::vector<std::string> failures(kThreads);
  auto work = [&](int id) {
    std::mt19937_64 random(100 + id);
    std::vector<std::pair<uint8_t *, int64_t>> held;
    auto mark = static_cast<uint8_t>(0x10 * (id + 1));
    // Checks that the block still holds this thread's mark, and frees it.
    auto release = [&](const std::pair<uint8_t *, int64_t> &block) {
      for (int64_t b = 0; b < block.second && failures[id].empty(); ++b)
        if (block.first[b] != mark)
          failures[id] = "thread " + std::to_string(id) + ": a block was written by another thread";
      allocator.deallocate(block.first);
    };
    for (int op = 0; op < kOperations && failures[id].empty(); ++op) {
      if (random() % 2 == 0 || held.empty()) {
        int64_t bytes = 1 + static_cast<int64_t>(random() % 8192);
        auto *block = static_cast<uint8_t *>(allocator.allocate(bytes));
        std::memset(block, mark, static_cast<size_t>(bytes));
        held.push_back({block, bytes});
      } else {
        size_t i = random() % held.size();
        release(held[i]);
        held[i] = held.back();
        held.pop_back();
      }
    }
    for (const auto &block : held)
      release(block);
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id)
    threads.emplace_back(work, id);
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &failure : failures)
    EXPECT_EQ(failure, "");
  EXPECT_EQ(allocator.stats().in_use, before);
  allocator.release_cache();
  EXPECT_EQ(allocator.stats().cached, 0) << "a segment did not merge back into one free block";
}

// A BlockCache over memory of its own kind, as a CUDA device's (Note [The
// driver's device]): 256-byte blocks from segments of a source with a fixed
// capacity, which refuses what it cannot hold as cuMemAlloc does.
class CappedSource {
public:
  explicit CappedSource(int64_t capacity) : capacity_(capacity) {}
  ~CappedSource() { EXPECT_EQ(held_, 0) << "a segment was not given back"; }
  sinter::runtime::BlockCache::Source source() {
    return {.acquire = [this](int64_t bytes) -> void * {
              ++acquired;
              if (held_ + bytes > capacity_)
                return nullptr;
              held_ += bytes;
              return std::aligned_alloc(256, static_cast<size_t>(bytes));
            },
            .release =
                [this](void *segment, int64_t bytes) {
                  held_ -= bytes;
                  std::free(segment);
                },
            .alignment = 256};
  }
  int acquired = 0;

private:
  int64_t capacity_, held_ = 0;
};

TEST(BlockCache, AStepsRequestsAreServedFromTheCacheAfterTheFirst) {
  CappedSource memory(1 << 24);
  {
    sinter::runtime::BlockCache cache(memory.source());
    EXPECT_EQ(cache.sizeClass(1), 256);
    EXPECT_EQ(cache.sizeClass(257), 512);
    // A step: its arena, then its results, then the arena given back; the
    // parameters' old values given back after it.
    std::vector<void *> parameters = {cache.allocate(40000), cache.allocate(1000)};
    auto step = [&] {
      void *arena = cache.allocate(300000);
      std::vector<void *> results = {cache.allocate(40000), cache.allocate(1000),
                                     cache.allocate(4)};
      for (void *block : results)
        EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 256, 0u);
      cache.deallocate(arena);
      for (void *&parameter : parameters)
        cache.deallocate(parameter);
      parameters = {results[0], results[1]};
      cache.deallocate(results[2]);
    };
    step();
    int acquired = memory.acquired;
    sinter::runtime::BlockCache::Stats first = cache.stats();
    for (int k = 0; k < 5; ++k)
      step();
    EXPECT_EQ(memory.acquired, acquired) << "no segment acquired after the first step";
    EXPECT_EQ(cache.stats().segments, first.segments);
    EXPECT_EQ(cache.stats().in_use, cache.sizeClass(40000) + cache.sizeClass(1000));
    for (void *parameter : parameters)
      cache.deallocate(parameter);
    EXPECT_EQ(cache.stats().in_use, 0);
    cache.releaseFreeSegments();
    EXPECT_EQ(cache.stats().cached, 0);
    EXPECT_EQ(cache.stats().segments, 0);
  }
}

TEST(BlockCache, WhenTheSourceIsFullFreeSegmentsGoBackAndFreeBlocksAreUsed) {
  CappedSource memory(1 << 20);
  sinter::runtime::BlockCache cache(memory.source());
  // Two segments of 256 KiB, freed: cached.
  void *a = cache.allocate(1 << 18), *b = cache.allocate(1 << 18);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  cache.deallocate(a);
  EXPECT_EQ(cache.stats().releasable, 1 << 18);
  cache.deallocate(b);
  EXPECT_EQ(cache.stats().cached, 1 << 19);
  EXPECT_EQ(cache.stats().releasable, 1 << 19);
  // 768 KiB does not fit beside them: they are given back and it is asked
  // again.
  void *large = cache.allocate(3 << 18);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(cache.stats().segments, 1);
  // A small request the source cannot hold takes a free block that can,
  // even one far larger than it (the best fit limit is lifted).
  cache.deallocate(large);
  void *all = cache.allocate(1 << 20);
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(cache.stats().segments, 1);
  cache.split(all, {{0, 1 << 19}});
  EXPECT_EQ(cache.stats().cached, 1 << 19);
  EXPECT_EQ(cache.stats().releasable, 0) << "its segment holds a block in use";
  void *small = cache.allocate(1000);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(static_cast<uint8_t *>(small), static_cast<uint8_t *>(all) + (1 << 19))
      << "the freed half of the segment";
  // Nothing holds more than what is left: refused, with null.
  EXPECT_EQ(cache.allocate(1 << 20), nullptr);
  cache.deallocate(small);
  cache.deallocate(all);
  cache.releaseFreeSegments();
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

TEST(HostAllocatorDeathTest, AWritePastTheBytesAskedForIsReportedInAnAsanBuild) {
  // Note [Poisoned arenas]: a block's size class is larger than what was
  // asked for; in an AddressSanitizer build the tail cannot be touched.
#if defined(__SANITIZE_ADDRESS__)
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto *block = static_cast<volatile uint8_t *>(HostAllocator::get().allocate(100));
  block[99] = 1;
  EXPECT_DEATH(block[100] = 1, "use-after-poison");
  HostAllocator::get().deallocate(const_cast<uint8_t *>(block));
#else
  GTEST_SKIP() << "not an AddressSanitizer build (SINTER_SANITIZE=address,undefined "
                  "./tools/test.sh runs this)";
#endif
}

} // namespace
