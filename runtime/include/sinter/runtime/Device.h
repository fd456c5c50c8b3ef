//===- Device.h - where a Program runs, and its memory -----------*- C++ -*-===//
#ifndef SINTER_RUNTIME_DEVICE_H
#define SINTER_RUNTIME_DEVICE_H

#include <cstdint>
#include <string>

namespace sinter::runtime {

enum class DeviceKind : uint8_t { Cpu, Cuda };

/// A device as plain data: what planning and the allocator need of it.
struct Device {
  DeviceKind kind = DeviceKind::Cpu;
  int index = 0;
  /// All of the device's memory, in bytes.
  int64_t capacityBytes = 0;
  /// Every block the device's allocator hands out is a multiple of this,
  /// and so is its address (64 on the host: a cache line, an AVX-512
  /// vector; 256 on GPUs, cudaMalloc's alignment and cuBLAS's preference).
  int64_t granularity = 64;

  /// "cpu", "cuda:1".
  std::string name() const;
};

/// The host: its physical memory, 64-byte blocks.
const Device &hostDevice();

/// Bytes of `device`'s memory free now (the host: what the system would
/// give, not counting blocks the HostAllocator caches); -1 when it cannot
/// be asked (a CUDA device before its backend exists).
int64_t freeBytes(const Device &device);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_DEVICE_H
