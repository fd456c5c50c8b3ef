//===- Allocator.cpp - host memory for tensors, cached --------------------===//
#include "sinter/runtime/Allocator.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <unistd.h>

namespace sinter::runtime {

HostAllocator &HostAllocator::get() {
  // Never destroyed: tensors freed during static destruction still return here.
  static HostAllocator *allocator = new HostAllocator();
  return *allocator;
}

int64_t HostAllocator::system_available() {
  return static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int64_t HostAllocator::size_class(int64_t bytes) {
  int64_t size = std::max<int64_t>(bytes, 64);
  // Eight classes per power of two above 512 bytes, 64-byte steps below.
  int64_t step = 64;
  if (size > 512)
    step = std::max<int64_t>(64,
                             static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(size))) / 8);
  return (size + step - 1) / step * step;
}

void *HostAllocator::allocate(int64_t bytes) {
  int64_t size = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = free_.find(size);
    if (found != free_.end() && !found->second.empty()) {
      void *block = found->second.back();
      found->second.pop_back();
      stats_.cached -= size;
      stats_.in_use += size;
      stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
      stats_.window_peak = std::max(stats_.window_peak, stats_.in_use);
      return block;
    }
  }
  void *block = std::aligned_alloc(64, static_cast<size_t>(size));
  if (block == nullptr) {
    release_cache();
    block = std::aligned_alloc(64, static_cast<size_t>(size));
    if (block == nullptr)
      return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.in_use += size;
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  stats_.window_peak = std::max(stats_.window_peak, stats_.in_use);
  return block;
}

void HostAllocator::deallocate(void *block, int64_t bytes) {
  if (block == nullptr)
    return;
  int64_t size = size_class(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  free_[size].push_back(block);
  stats_.in_use -= size;
  stats_.cached += size;
}

void HostAllocator::release_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[size, blocks] : free_)
    for (void *block : blocks)
      std::free(block);
  free_.clear();
  stats_.cached = 0;
}

HostAllocator::Stats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void HostAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_in_use = stats_.in_use;
}

void HostAllocator::reset_window() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.window_peak = stats_.in_use;
}

} // namespace sinter::runtime
