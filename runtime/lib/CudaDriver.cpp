//===- CudaDriver.cpp - the CUDA driver, loaded at first use --------------===//
//
// See Note [Lazy CUDA] in CudaDriver.h. The few driver entry points used here
// are declared by hand (their C ABI is stable across driver versions), so the
// runtime builds without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/CudaDriver.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace sinter::cuda {
namespace {

// Values from cuda.h that this file interprets.
constexpr int kCudaErrorStubLibrary = 34;
constexpr int kCudaErrorNoDevice = 100;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

using CuInitFn = int (*)(unsigned);
using CuDriverGetVersionFn = int (*)(int *);
using CuDeviceGetCountFn = int (*)(int *);
using CuDeviceGetFn = int (*)(int *, int);
using CuDeviceGetNameFn = int (*)(char *, int, int);
using CuDeviceTotalMemFn = int (*)(std::size_t *, int);
using CuDeviceGetAttributeFn = int (*)(int *, int, int);
using CuGetErrorFn = int (*)(int, const char **);

struct Driver {
  void *handle = nullptr;
  CuInitFn init = nullptr;
  CuDriverGetVersionFn driverGetVersion = nullptr;
  CuDeviceGetCountFn deviceGetCount = nullptr;
  CuDeviceGetFn deviceGet = nullptr;
  CuDeviceGetNameFn deviceGetName = nullptr;
  CuDeviceTotalMemFn deviceTotalMem = nullptr;
  CuDeviceGetAttributeFn deviceGetAttribute = nullptr;
  CuGetErrorFn getErrorName = nullptr;
  CuGetErrorFn getErrorString = nullptr;
};

template <typename Fn> Status loadSymbol(void *handle, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(
        "the CUDA driver library has no symbol '", name, "'; it is too old or not a CUDA driver"));
  return absl::OkStatus();
}

StatusOr<Driver> openDriver() {
  const char *override = std::getenv("SINTER_CUDA_DRIVER");
  std::string library = override != nullptr && *override != '\0' ? override : kDefaultDriverLibrary;
  Driver driver;
  driver.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (driver.handle == nullptr) {
    const char *why = dlerror();
    return absl::UnavailableError(
        absl::StrCat("no CUDA device: the NVIDIA driver library '", library,
                     "' could not be loaded (", why != nullptr ? why : "unknown reason",
                     "); use the CPU backend, or install the NVIDIA driver"));
  }
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuInit", driver.init));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuDriverGetVersion", driver.driverGetVersion));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuDeviceGetCount", driver.deviceGetCount));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuDeviceGet", driver.deviceGet));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuDeviceGetName", driver.deviceGetName));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuDeviceTotalMem_v2", driver.deviceTotalMem));
  SINTER_RETURN_IF_ERROR(
      loadSymbol(driver.handle, "cuDeviceGetAttribute", driver.deviceGetAttribute));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuGetErrorName", driver.getErrorName));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuGetErrorString", driver.getErrorString));

  int result = driver.init(0);
  if (result == kCudaErrorStubLibrary)
    return absl::UnavailableError(
        absl::StrCat("no CUDA device: '", library,
                     "' is the CUDA toolkit's stub library, not an NVIDIA driver; use the CPU "
                     "backend, or install the driver"));
  if (result == kCudaErrorNoDevice)
    return absl::UnavailableError(
        "no CUDA device: the NVIDIA driver is installed but reports no device");
  if (result != 0)
    return absl::UnavailableError(
        absl::StrCat("no CUDA device: cuInit failed with CUresult ", result));
  return driver;
}

// Opens the driver once per process; the outcome (driver or error) is kept.
const StatusOr<Driver> &theDriver() {
  static const StatusOr<Driver> *driver = new StatusOr<Driver>(openDriver());
  return *driver;
}

} // namespace

Status driverError(int result, const char *call, const char *file, int line) {
  std::string name = absl::StrCat("CUresult ", result);
  std::string text;
  if (const StatusOr<Driver> &driver = theDriver(); driver.ok()) {
    const char *str = nullptr;
    if (driver->getErrorName(result, &str) == 0 && str != nullptr)
      name = str;
    if (driver->getErrorString(result, &str) == 0 && str != nullptr)
      text = absl::StrCat(": ", str);
  }
  return withLocation(absl::InternalError(absl::StrCat(call, " failed with ", name, text)), file,
                      line);
}

StatusOr<int> driverVersion() {
  SINTER_ASSIGN_OR_RETURN(const Driver &driver, theDriver());
  int version = 0;
  SINTER_CUDA_RETURN_IF_ERROR(driver.driverGetVersion(&version));
  return version;
}

StatusOr<std::vector<DeviceInfo>> listDevices() {
  SINTER_ASSIGN_OR_RETURN(const Driver &driver, theDriver());
  int count = 0;
  SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGetCount(&count));
  if (count == 0)
    return absl::UnavailableError("no CUDA device: the NVIDIA driver reports no device");
  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    int device = 0;
    SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGet(&device, ordinal));
    DeviceInfo info;
    info.ordinal = ordinal;
    char name[256] = {};
    SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGetName(name, sizeof(name) - 1, device));
    info.name = name;
    std::size_t bytes = 0;
    SINTER_CUDA_RETURN_IF_ERROR(driver.deviceTotalMem(&bytes, device));
    info.totalMemoryBytes = bytes;
    SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGetAttribute(&info.computeCapabilityMajor,
                                                          kAttrComputeCapabilityMajor, device));
    SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGetAttribute(&info.computeCapabilityMinor,
                                                          kAttrComputeCapabilityMinor, device));
    devices.push_back(std::move(info));
  }
  return devices;
}

int deviceCount() {
  StatusOr<std::vector<DeviceInfo>> devices = listDevices();
  return devices.ok() ? static_cast<int>(devices->size()) : 0;
}

} // namespace sinter::cuda
