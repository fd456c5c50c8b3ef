//===- CudaDriver.h - the CUDA driver, loaded at first use ----------------===//
//
// Note [Lazy CUDA]
// Sinter never links libcuda: on a machine without an NVIDIA driver only the
// toolkit's stub exists, and a binary linked against it does not start. The
// driver is opened with dlopen the first time a CUDA device is asked for, so
// every Sinter binary runs anywhere and, without a GPU, says so in a Status.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_CUDADRIVER_H
#define SINTER_RUNTIME_CUDADRIVER_H

#include "sinter/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinter::cuda {

/// What the driver reports about one CUDA device.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::uint64_t totalMemoryBytes = 0;
  int computeCapabilityMajor = 0;
  int computeCapabilityMinor = 0;
};

/// A device address (CUdeviceptr).
using DevicePointer = std::uint64_t;

/// The driver library opened by default; `SINTER_CUDA_DRIVER` (a path or a
/// soname) replaces it.
inline constexpr const char *kDefaultDriverLibrary = "libcuda.so.1";

/// Returns the installed driver's version (e.g. 13000 for CUDA 13.0), or an
/// error that says why no usable driver exists (not installed, only the
/// toolkit stub, no device).
StatusOr<int> driverVersion();

/// Returns every CUDA device the driver sees; an error when there is no driver
/// or no device. Loads and initialises the driver on first call; later calls
/// reuse it.
StatusOr<std::vector<DeviceInfo>> listDevices();

/// Returns the number of usable CUDA devices: 0 when there is no driver or no
/// device (the reason is then in `listDevices()`'s error).
int deviceCount();

/// Turns a CUresult into a Status that names the call, the driver's own error
/// name and text, and the place of the call.
Status driverError(int result, const char *call, const char *file, int line);

} // namespace sinter::cuda

/// Converts a driver call's CUresult into a returned Status with file and line.
#define SINTER_CUDA_RETURN_IF_ERROR(call)                                                          \
  do {                                                                                             \
    int sinter_cu_result_ = static_cast<int>(call);                                                \
    if (sinter_cu_result_ != 0)                                                                    \
      return ::sinter::cuda::driverError(sinter_cu_result_, #call, __FILE__, __LINE__);            \
  } while (false)

#endif // SINTER_RUNTIME_CUDADRIVER_H
