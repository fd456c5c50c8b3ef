//===- Allocator.cpp - host memory for tensors, cached --------------------===//
#include "sinter/runtime/Allocator.h"

#include "Poison.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <unistd.h>

namespace sinter::runtime {

HostAllocator &HostAllocator::get() {
  // Never destroyed: tensors freed during static destruction still return here.
  static HostAllocator *allocator = new HostAllocator();
  return *allocator;
}

HostAllocator::HostAllocator()
    : cache_({.acquire =
                  [](int64_t bytes) { return std::aligned_alloc(64, static_cast<size_t>(bytes)); },
              .release = [](void *segment, int64_t) { std::free(segment); },
              // Note [Poisoned arenas]: the bytes asked for can be touched,
              // not the size class's tail.
              .onHandOut = [](void *memory, int64_t bytes) { unpoison(memory, bytes); },
              .onFree = [](void *memory, int64_t bytes) { poison(memory, bytes); },
              .alignment = 64}) {}

int64_t HostAllocator::system_available() {
  return static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int64_t HostAllocator::size_class(int64_t bytes) {
  return (std::max<int64_t>(bytes, 64) + 63) / 64 * 64;
}

BlockCache::~BlockCache() {
  releaseFreeSegmentsLocked();
  for (auto &[base, block] : blocks_)
    delete block;
}

BlockCache::Block *BlockCache::bestFit(int64_t size, int64_t limit) {
  auto found = free_.lower_bound({size, 0});
  if (found == free_.end() || found->first > limit)
    return nullptr;
  return blocks_.at(reinterpret_cast<const void *>(found->second));
}

void *BlockCache::take(Block *block, int64_t size) {
  free_.erase(freeKey(block));
  stats_.cached -= block->size;
  if (block->size > size) { // the rest stays free
    auto *rest = new Block{block->base + size, block->size - size, true, block, block->next};
    if (block->next != nullptr)
      block->next->prev = rest;
    block->next = rest;
    block->size = size;
    blocks_[rest->base] = rest;
    free_.insert(freeKey(rest));
    stats_.cached += rest->size;
  }
  block->free = false;
  stats_.in_use += size;
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  stats_.window_peak = std::max(stats_.window_peak, stats_.in_use);
  return block->base;
}

void BlockCache::forget(Block *block) {
  blocks_.erase(block->base);
  delete block;
}

void BlockCache::absorb(Block *left, Block *right) {
  left->size += right->size;
  left->next = right->next;
  if (right->next != nullptr)
    right->next->prev = left;
  forget(right);
}

void BlockCache::release(Block *block) {
  if (source_.onFree)
    source_.onFree(block->base, block->size);
  block->free = true;
  stats_.in_use -= block->size;
  stats_.cached += block->size;
  if (Block *next = block->next; next != nullptr && next->free) {
    free_.erase(freeKey(next));
    absorb(block, next);
  }
  if (Block *prev = block->prev; prev != nullptr && prev->free) {
    free_.erase(freeKey(prev));
    absorb(prev, block);
    block = prev;
  }
  free_.insert(freeKey(block));
}

void *BlockCache::allocate(int64_t bytes) {
  int64_t size = sizeClass(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  auto handOut = [&](Block *block) {
    void *base = take(block, size);
    if (source_.onHandOut)
      source_.onHandOut(base, bytes);
    return base;
  };
  if (Block *block = bestFit(size, 2 * size))
    return handOut(block);
  void *memory = source_.acquire(size);
  if (memory == nullptr) {
    releaseFreeSegmentsLocked();
    memory = source_.acquire(size);
  }
  if (memory == nullptr) {
    Block *block = bestFit(size, std::numeric_limits<int64_t>::max());
    return block == nullptr ? nullptr : handOut(block);
  }
  if (source_.onFree)
    source_.onFree(memory, size);
  auto *block = new Block{static_cast<uint8_t *>(memory), size, true, nullptr, nullptr};
  blocks_[block->base] = block;
  free_.insert(freeKey(block));
  stats_.cached += size;
  ++stats_.segments;
  return handOut(block);
}

BlockCache::Block *BlockCache::handedOut(void *memory, const char *what) {
  auto found = blocks_.find(memory);
  if (found == blocks_.end() || found->second->free) {
    std::fprintf(stderr, "sinter: internal error: %s %p, which is not an allocated block\n", what,
                 memory);
    std::abort();
  }
  return found->second;
}

void BlockCache::deallocate(void *memory) {
  std::lock_guard<std::mutex> lock(mutex_);
  release(handedOut(memory, "freeing"));
}

void BlockCache::split(void *memory, const std::vector<Part> &parts) {
  std::lock_guard<std::mutex> lock(mutex_);
  Block *block = handedOut(memory, "splitting");
  int64_t size = block->size;
  Block *after = block->next;
  // Cut the block at every part's ends: parts stay in use, gaps are freed.
  // Parts are not empty, so no two gaps are neighbours.
  std::vector<Block *> pieces;
  std::vector<bool> gaps;
  int64_t at = 0;
  auto cut = [&](int64_t from, int64_t to, bool gap) {
    if (to > from) {
      pieces.push_back(new Block{block->base + from, to - from, false, nullptr, nullptr});
      gaps.push_back(gap);
    }
  };
  for (const Part &part : parts) {
    int64_t a = source_.alignment;
    if (part.offset < at || part.offset % a != 0 || part.bytes % a != 0 || part.bytes <= 0 ||
        part.offset + part.bytes > size) {
      std::fprintf(stderr, "sinter: internal error: part [%lld, +%lld) of a %lld-byte block\n",
                   static_cast<long long>(part.offset), static_cast<long long>(part.bytes),
                   static_cast<long long>(size));
      std::abort();
    }
    cut(at, part.offset, true);
    cut(part.offset, part.offset + part.bytes, false);
    at = part.offset + part.bytes;
  }
  cut(at, size, true);
  Block *prev = block->prev;
  blocks_.erase(block->base);
  delete block;
  for (Block *piece : pieces) {
    piece->prev = prev;
    if (prev != nullptr)
      prev->next = piece;
    blocks_[piece->base] = piece;
    prev = piece;
  }
  prev->next = after;
  if (after != nullptr)
    after->prev = prev;
  // The gaps were in use as part of the block: free them (each merges only
  // with blocks outside `pieces`, or is merged into one and not seen again).
  for (size_t i = 0; i < pieces.size(); ++i)
    if (gaps[i])
      release(pieces[i]);
}

void BlockCache::releaseFreeSegmentsLocked() {
  for (auto it = free_.begin(); it != free_.end();) {
    Block *block = blocks_.at(reinterpret_cast<const void *>(it->second));
    if (block->prev != nullptr || block->next != nullptr) {
      ++it;
      continue;
    }
    it = free_.erase(it);
    stats_.cached -= block->size;
    --stats_.segments;
    if (source_.onHandOut)
      source_.onHandOut(block->base, block->size);
    source_.release(block->base, block->size);
    forget(block);
  }
}

void BlockCache::releaseFreeSegments() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseFreeSegmentsLocked();
}

BlockCache::Stats BlockCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats stats = stats_;
  for (const auto &[size, base] : free_) {
    const Block *block = blocks_.at(reinterpret_cast<const void *>(base));
    if (block->prev == nullptr && block->next == nullptr)
      stats.releasable += size;
  }
  return stats;
}

void BlockCache::resetPeak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_in_use = stats_.in_use;
}

void BlockCache::resetWindow() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.window_peak = stats_.in_use;
}

} // namespace sinter::runtime
