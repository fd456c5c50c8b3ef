//===- Allocator.h - host memory for tensors, cached ----------------------===//
//
// Tensors' host memory comes in blocks aligned to 64 bytes (a cache line, an
// AVX-512 vector). A freed block is kept for the next request of the same
// size class instead of returned to the system, as PyTorch's CUDA caching
// allocator does for device memory: a training loop allocates the same sizes
// every step, so after the first step it takes nothing from the system and
// touches no fresh pages. When the system refuses a request, the cache is
// released and the request tried once more.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_ALLOCATOR_H
#define SINTER_RUNTIME_ALLOCATOR_H

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace sinter::runtime {

class HostAllocator {
public:
  /// The process's allocator.
  static HostAllocator &get();

  /// A block of at least `bytes` bytes (at least one cache line), or null
  /// when the system has no memory left.
  void *allocate(int64_t bytes);
  /// Returns a block from allocate(`bytes`) to the cache.
  void deallocate(void *block, int64_t bytes);
  /// Frees every cached block.
  void release_cache();

  struct Stats {
    int64_t in_use = 0;      // bytes in blocks handed out (size classes)
    int64_t peak_in_use = 0; // the most in use since the start or reset_peak()
    int64_t cached = 0;      // bytes in free blocks kept for reuse
    int64_t window_peak = 0; // the most in use since reset_window()
  };
  Stats stats() const;
  void reset_peak();
  /// Starts a measuring window (a step's run) without disturbing peak_in_use.
  void reset_window();

  /// The size class a request of `bytes` is served from: a multiple of 64
  /// bytes, within 1/8 above the request.
  static int64_t size_class(int64_t bytes);

  /// Bytes of memory the system has free now (not counting this allocator's
  /// cached blocks).
  static int64_t system_available();

private:
  mutable std::mutex mutex_;
  std::map<int64_t, std::vector<void *>> free_;
  Stats stats_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_ALLOCATOR_H
