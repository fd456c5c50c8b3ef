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

#include "sinter/runtime/LaunchShape.h"
#include "sinter/runtime/Status.h"

#include <cstddef>
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

/// Memory on one device, freed when the object goes.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  DevicePointer address() const { return address_; }
  std::size_t bytes() const { return bytes_; }
  Status copyFromHost(const void *source, std::size_t bytes);
  Status copyToHost(void *destination, std::size_t bytes) const;

private:
  friend class Device;
  void *context_ = nullptr;
  DevicePointer address_ = 0;
  std::size_t bytes_ = 0;
};

/// A loaded code object (cubin or PTX) and its kernels.
class Module {
public:
  Module() = default;
  Module(Module &&other) noexcept;
  Module &operator=(Module &&other) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module();

  /// Launches the `extern "C"` kernel `name` on `shape` (Note [Launch
  /// shapes]); `arguments` points at each argument's value, as
  /// cuLaunchKernel takes them. Asynchronous. A shape outside CUDA's limits
  /// (grid x below 2^31, y and z below 2^16, at most 1024 threads a block)
  /// is refused naming the kernel.
  Status launch(const std::string &name, const runtime::LaunchShape &shape, void **arguments) const;

private:
  friend class Device;
  void *context_ = nullptr;
  void *module_ = nullptr;
};

/// One CUDA device, its primary context current on the calling thread.
class Device {
public:
  /// Fails with "no CUDA device..." when there is no driver or no such device.
  static StatusOr<Device> open(int ordinal);

  const DeviceInfo &info() const { return info_; }
  StatusOr<DeviceBuffer> allocate(std::size_t bytes) const;
  /// Loads a cubin for this device's architecture, or PTX the driver compiles.
  StatusOr<Module> load(const std::string &image) const;
  /// Waits for all work launched on the device; reports the first kernel fault.
  Status synchronize() const;

private:
  Status makeCurrent() const;
  DeviceInfo info_;
  void *context_ = nullptr;
};

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
