//===- Device.cpp - the host device ---------------------------------------===//
#include "sinter/runtime/Device.h"

#include "sinter/runtime/Allocator.h"

#include <unistd.h>

namespace sinter::runtime {

std::string Device::name() const {
  return kind == DeviceKind::Cpu ? std::string("cpu") : "cuda:" + std::to_string(index);
}

const Device &hostDevice() {
  static const Device host{
      .kind = DeviceKind::Cpu,
      .index = 0,
      .capacityBytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) *
                       static_cast<int64_t>(sysconf(_SC_PAGESIZE)),
      .granularity = 64,
  };
  return host;
}

int64_t freeBytes(const Device &device) {
  return device.kind == DeviceKind::Cpu ? HostAllocator::system_available() : -1;
}

} // namespace sinter::runtime
