//===- Device.h - which device, and its memory -------------------*- C++ -*-===//
//
// Note [One device identity]
// A device is named the same way in every layer: a DeviceId, the host or
// CUDA device `index`. The frontend's sinter::Device is a DeviceId with
// checks at the user's line (sinter/Device.h); a CudaDevice
// (sinter/runtime/CudaExecutable.h) and the host's allocator describe their
// memory as a Device, a DeviceId and its allocation granularity; a target
// says which kind it compiles for (sinter/Codegen/Target.h). Its text
// ("cpu", "cuda", "cuda:N") is read in one place, DeviceId::parse:
// SINTER_DEVICE, `--device` and sinter::Device::parse all go through it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_DEVICE_H
#define SINTER_RUNTIME_DEVICE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sinter::runtime {

enum class DeviceKind : uint8_t { Cpu, Cuda };

/// Which device: the host (index 0), or CUDA device `index`.
struct DeviceId {
  DeviceKind kind = DeviceKind::Cpu;
  int index = 0;

  /// "cpu", "cuda:1".
  std::string name() const;
  /// "cpu", "cuda" (cuda:0) or "cuda:N" with N a decimal ordinal that fits
  /// an int; nullopt for anything else.
  static std::optional<DeviceId> parse(std::string_view text);

  friend bool operator==(const DeviceId &, const DeviceId &) = default;
};

/// A device's memory as the allocator and planning see it.
struct Device {
  DeviceId id;
  /// Every block the device's allocator hands out is a multiple of this,
  /// and so is its address (64 on the host: a cache line, an AVX-512
  /// vector; 256 on GPUs, cudaMalloc's alignment and cuBLAS's preference).
  int64_t granularity = 64;

  std::string name() const { return id.name(); }
};

/// The host: 64-byte blocks.
const Device &hostDevice();

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_DEVICE_H
