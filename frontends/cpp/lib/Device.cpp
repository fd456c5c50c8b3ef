//===- Device.cpp - where tensors live and programs run -------------------===//
#include "sinter/Device.h"

#include "sinter/Error.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/Environment.h"

#include "Format.h"

#include <optional>

namespace sinter {

Device Device::cuda(int index, std::source_location where) {
  SINTER_CHECK(index >= 0, where, cat("CUDA device index must be >= 0, got ", index));
  return Device({Kind::Cuda, index});
}

Device Device::best() { return cuda::deviceCount() > 0 ? Device({Kind::Cuda, 0}) : cpu(); }

Device Device::parse(std::string_view text, std::source_location where) {
  std::optional<runtime::DeviceId> id = runtime::DeviceId::parse(text);
  SINTER_CHECK(id.has_value(), where,
               cat("unknown device '", std::string(text), "'; expected 'cpu', 'cuda' or 'cuda:N'"));
  return Device(*id);
}

// Note [The CUDA simulator as a device]: with SINTER_CUDA_SIMULATOR, cuda:0
// is the CUDA simulator (sinter/runtime/Simt.h) and no GPU is asked for.
bool Device::available() const {
  if (isCpu())
    return true;
  if (runtime::environment().cuda_simulator)
    return index() == 0;
  return index() < cuda::deviceCount();
}

void Device::ensureAvailable(std::source_location where) const {
  if (isCpu())
    return;
  if (runtime::environment().cuda_simulator) {
    SINTER_CHECK(index() == 0, where,
                 cat(toString(), " requested but the CUDA simulator (SINTER_CUDA_SIMULATOR) has "
                                 "one device, cuda:0"));
    return;
  }
  StatusOr<std::vector<cuda::DeviceInfo>> devices = cuda::listDevices();
  SINTER_CHECK(devices.ok(), where, cat(toString(), " requested: ", devices.status().message()));
  SINTER_CHECK(index() < static_cast<int>(devices->size()), where,
               cat(toString(), " requested but this machine has ", devices->size(),
                   " CUDA device(s) (cuda:0..cuda:", devices->size() - 1, ")"));
}

} // namespace sinter
