//===- CudaDriver.cpp - the CUDA driver, loaded at first use --------------===//
//
// See Note [Lazy CUDA] in CudaDriver.h. The few driver entry points used here
// are declared by hand (their C ABI is stable across driver versions), so the
// runtime builds without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/CudaDriver.h"

#include "CudaDriverApi.h"

#include "sinter/runtime/Environment.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <utility>

namespace sinter::cuda {
namespace detail {
namespace {

template <typename Fn> Status loadSymbol(void *handle, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(
        "the CUDA driver library has no symbol '", name, "'; it is too old or not a CUDA driver"));
  return absl::OkStatus();
}

StatusOr<Driver> openDriver() {
  const std::string &override = runtime::environment().cuda_driver;
  std::string library = !override.empty() ? override : kDefaultDriverLibrary;
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
  SINTER_RETURN_IF_ERROR(
      loadSymbol(driver.handle, "cuDevicePrimaryCtxRetain", driver.primaryCtxRetain));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuCtxSetCurrent", driver.ctxSetCurrent));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuCtxSynchronize", driver.ctxSynchronize));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemAlloc_v2", driver.memAlloc));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemFree_v2", driver.memFree));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemcpyHtoD_v2", driver.memcpyHtoD));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemcpyDtoH_v2", driver.memcpyDtoH));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemcpyDtoD_v2", driver.memcpyDtoD));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemsetD8_v2", driver.memsetD8));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemsetD16_v2", driver.memsetD16));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemsetD32_v2", driver.memsetD32));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemsetD2D32_v2", driver.memsetD2D32));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuMemGetInfo_v2", driver.memGetInfo));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuModuleLoadData", driver.moduleLoadData));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuModuleUnload", driver.moduleUnload));
  SINTER_RETURN_IF_ERROR(
      loadSymbol(driver.handle, "cuModuleGetFunction", driver.moduleGetFunction));
  SINTER_RETURN_IF_ERROR(loadSymbol(driver.handle, "cuLaunchKernel", driver.launchKernel));

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

} // namespace

// Opens the driver once per process; the outcome (driver or error) is kept.
const StatusOr<Driver> &theDriver() {
  static const StatusOr<Driver> *driver = new StatusOr<Driver>(openDriver());
  return *driver;
}

/// Makes `context` current on the calling thread (a no-op when it already is).
Status setCurrent(void *context) {
  SINTER_ASSIGN_OR_RETURN(const Driver &driver, theDriver());
  SINTER_CUDA_RETURN_IF_ERROR(driver.ctxSetCurrent(context));
  return absl::OkStatus();
}

StatusOr<void *> primaryContext(int ordinal) {
  SINTER_ASSIGN_OR_RETURN(const Driver &driver, theDriver());
  int handle = 0;
  SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGet(&handle, ordinal));
  // The primary context lives as long as the process (as the CUDA runtime's).
  void *context = nullptr;
  SINTER_CUDA_RETURN_IF_ERROR(driver.primaryCtxRetain(&context, handle));
  return context;
}

} // namespace detail

using detail::Driver;
using detail::theDriver;

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
    SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGetAttribute(
        &info.computeCapabilityMajor, detail::kAttrComputeCapabilityMajor, device));
    SINTER_CUDA_RETURN_IF_ERROR(driver.deviceGetAttribute(
        &info.computeCapabilityMinor, detail::kAttrComputeCapabilityMinor, device));
    devices.push_back(std::move(info));
  }
  return devices;
}

int deviceCount() {
  StatusOr<std::vector<DeviceInfo>> devices = listDevices();
  return devices.ok() ? static_cast<int>(devices->size()) : 0;
}

namespace detail {

Status launch(const Driver &driver, void *function, const std::string &name,
              const runtime::LaunchShape &shape, void **arguments) {
  SINTER_RETURN_IF_ERROR(runtime::checkCudaLaunchShape(name, shape));
  auto u = [](int64_t value) { return static_cast<unsigned>(value); };
  SINTER_CUDA_RETURN_IF_ERROR(driver.launchKernel(
      function, u(shape.grid[0]), u(shape.grid[1]), u(shape.grid[2]), u(shape.block[0]),
      u(shape.block[1]), u(shape.block[2]), u(shape.sharedBytes), nullptr, arguments, nullptr));
  return absl::OkStatus();
}

} // namespace detail

} // namespace sinter::cuda
