//===- Allocator.h - host memory for tensors, cached ----------------------===//
//
// Tensors' host memory comes in blocks aligned to 64 bytes (a cache line, an
// AVX-512 vector). A freed block is kept for the next request instead of
// returned to the system, as PyTorch's CUDA caching allocator does for device
// memory: a training loop allocates the same sizes every step, so after the
// first step it takes nothing from the system and touches no fresh pages.
//
// Note [Blocks and segments]
// Each request the system serves is a segment; a segment is cut into blocks,
// handed out or free, in address order. A request takes the smallest free
// block that holds it (best fit) and leaves the rest of that block free; a
// freed block merges with its free neighbours, so a step's arena freed in
// parts is whole again once its last part is freed. A free block more than
// twice a request's size is left for larger requests while the system has
// memory (small tensors do not cut up an arena). A block handed out may be
// split into parts that are freed one by one (split()): a compiled step's
// results are parts of its arena (Note [Results in the arena] in
// sinter/runtime/Program.h). When the system refuses a request, the free
// segments are released and the request tried once more, then any free
// block that holds it is used.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_ALLOCATOR_H
#define SINTER_RUNTIME_ALLOCATOR_H

#include "sinter/runtime/Device.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sinter::runtime {

/// A device's memory, handed out in blocks (one allocator per device).
class Allocator {
public:
  virtual ~Allocator() = default;
  virtual const Device &device() const = 0;
  /// A block of at least `bytes` bytes (sizeClass(bytes)), aligned to the
  /// device's granularity, or null when the device has no memory left.
  virtual void *allocate(int64_t bytes) = 0;
  /// Returns a block from allocate() (or a part of one, where the allocator
  /// splits blocks).
  virtual void deallocate(void *block) = 0;
  /// The size of the block a request of `bytes` gets.
  virtual int64_t sizeClass(int64_t bytes) const = 0;
};

/// Note [Blocks and segments] over any memory: the blocks of the segments
/// a Source gives, cached. The host's allocator and the CUDA driver's device
/// memory are both one (Note [The driver's device]); thread-safe.
class BlockCache {
public:
  struct Source {
    /// A segment of `bytes` bytes aligned to `alignment`, or null when the
    /// memory is exhausted.
    std::function<void *(int64_t bytes)> acquire;
    /// Gives a segment from acquire() back.
    std::function<void(void *segment, int64_t bytes)> release;
    /// Optional: called on the bytes a block hands out as it does, and on a
    /// block's bytes as they are freed (the host poisons freed memory for
    /// AddressSanitizer, Note [Poisoned arenas]).
    std::function<void(void *memory, int64_t bytes)> onHandOut = {};
    std::function<void(void *memory, int64_t bytes)> onFree = {};
    /// Every block's size and offset is a multiple of this.
    int64_t alignment = 64;
  };
  /// A part of a block: `bytes` from `offset`, both multiples of the
  /// alignment.
  struct Part {
    int64_t offset = 0;
    int64_t bytes = 0;
  };
  struct Stats {
    int64_t in_use = 0;      // bytes in blocks handed out
    int64_t peak_in_use = 0; // the most in use since the start or resetPeak()
    int64_t cached = 0;      // bytes in free blocks kept for reuse
    int64_t window_peak = 0; // the most in use since resetWindow()
    int64_t segments = 0;    // segments held (in use or cached)
    /// Of `cached`: bytes in segments with no block in use, which
    /// releaseFreeSegments() gives back whole (the rest are free blocks
    /// between blocks in use).
    int64_t releasable = 0;
  };

  explicit BlockCache(Source source) : source_(std::move(source)) {}
  BlockCache(const BlockCache &) = delete;
  BlockCache &operator=(const BlockCache &) = delete;
  /// Gives back the free segments (the owner frees its blocks first).
  ~BlockCache();

  /// The size of the block a request of `bytes` gets: a multiple of the
  /// alignment (best fit and merging, not coarse classes, make blocks
  /// reusable).
  int64_t sizeClass(int64_t bytes) const {
    int64_t a = source_.alignment;
    return (std::max<int64_t>(bytes, a) + a - 1) / a * a;
  }
  /// A block of sizeClass(`bytes`) bytes, or null when the source has no
  /// memory left (after the free segments were given back and any free
  /// block that holds it was tried).
  void *allocate(int64_t bytes);
  /// Returns a block from allocate() or split() to the cache; aborts on
  /// anything else (a double free, a pointer into a block).
  void deallocate(void *block);
  /// Splits a block from allocate() into `parts` (in increasing offset, not
  /// overlapping, inside the block), each a block of its own from now on,
  /// freed with deallocate(block + offset); the rest of the block is freed.
  void split(void *block, const std::vector<Part> &parts);
  /// Gives every segment with no block in use back to the source.
  void releaseFreeSegments();
  Stats stats() const;
  void resetPeak();
  void resetWindow();

private:
  /// A block of a segment; `prev` and `next` are its neighbours in the
  /// segment, null at the segment's ends.
  struct Block {
    uint8_t *base = nullptr;
    int64_t size = 0;
    bool free = false;
    Block *prev = nullptr, *next = nullptr;
  };
  /// The smallest free block of at least `size` bytes, at most `limit`.
  Block *bestFit(int64_t size, int64_t limit);
  /// The block handed out at `memory`; aborts, naming `what` was being
  /// done, when there is none.
  Block *handedOut(void *memory, const char *what);
  /// Hands out `size` bytes from the start of free block `block`.
  void *take(Block *block, int64_t size);
  /// Marks `block` free, merges it with free neighbours, and caches it.
  void release(Block *block);
  /// Merges `right` into its left neighbour `left` (both off the free set).
  void absorb(Block *left, Block *right);
  void forget(Block *block);
  static std::pair<int64_t, uintptr_t> freeKey(const Block *block) {
    return {block->size, reinterpret_cast<uintptr_t>(block->base)};
  }
  void releaseFreeSegmentsLocked();

  Source source_;
  mutable std::mutex mutex_;
  std::unordered_map<const void *, Block *> blocks_; // every block, by its base
  std::set<std::pair<int64_t, uintptr_t>> free_;     // free blocks: size, base
  Stats stats_;
};

/// The host's allocator, caching (Note [Blocks and segments]): a
/// BlockCache of 64-byte-aligned segments from the C library.
class HostAllocator final : public Allocator {
public:
  /// The process's allocator.
  static HostAllocator &get();

  /// A block of size_class(`bytes`) bytes, or null when the system has no
  /// memory left.
  void *allocate(int64_t bytes) override { return cache_.allocate(bytes); }
  /// Returns a block from allocate() or split() to the cache.
  void deallocate(void *block) override {
    if (block != nullptr)
      cache_.deallocate(block);
  }
  using Part = BlockCache::Part;
  /// BlockCache::split.
  void split(void *block, const std::vector<Part> &parts) { cache_.split(block, parts); }
  /// Returns every segment with no block in use to the system.
  void release_cache() { cache_.releaseFreeSegments(); }

  using Stats = BlockCache::Stats;
  Stats stats() const { return cache_.stats(); }
  void reset_peak() { cache_.resetPeak(); }
  /// Starts a measuring window (a step's run) without disturbing peak_in_use.
  void reset_window() { cache_.resetWindow(); }

  /// The size of the block a request of `bytes` gets: a multiple of 64.
  static int64_t size_class(int64_t bytes);
  int64_t sizeClass(int64_t bytes) const override { return size_class(bytes); }
  const Device &device() const override { return hostDevice(); }

  /// Bytes of memory the system has free now (not counting this allocator's
  /// cached blocks).
  static int64_t system_available();

private:
  HostAllocator();
  BlockCache cache_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_ALLOCATOR_H
