//===- CudaDriverApi.h - the CUDA driver's entry points, loaded -*- C++ -*-===//
//
// The driver entry points the runtime calls, as dlsym found them (Note
// [Lazy CUDA] in sinter/runtime/CudaDriver.h), for the files of the runtime
// that talk to the driver: CudaDriver.cpp (opening it, listing devices,
// launches) and DriverDevice.cpp (a GPU as a CudaDevice: memory, modules,
// matrix products). Declared by hand: their C ABI is
// stable across driver versions, and the runtime builds without the toolkit.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_LIB_CUDADRIVERAPI_H
#define SINTER_RUNTIME_LIB_CUDADRIVERAPI_H

#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/LaunchShape.h"

#include <cstddef>
#include <string>

namespace sinter::cuda::detail {

// Values from cuda.h that the runtime interprets.
constexpr int kCudaErrorStubLibrary = 34;
constexpr int kCudaErrorNoDevice = 100;
constexpr int kCudaErrorInvalidContext = 201;
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
using CuPrimaryCtxRetainFn = int (*)(void **, int);
using CuCtxSetCurrentFn = int (*)(void *);
using CuCtxSynchronizeFn = int (*)();
using CuMemAllocFn = int (*)(DevicePointer *, std::size_t);
using CuMemFreeFn = int (*)(DevicePointer);
using CuMemcpyHtoDFn = int (*)(DevicePointer, const void *, std::size_t);
using CuMemcpyDtoHFn = int (*)(void *, DevicePointer, std::size_t);
using CuMemcpyDtoDFn = int (*)(DevicePointer, DevicePointer, std::size_t);
using CuMemsetD8Fn = int (*)(DevicePointer, unsigned char, std::size_t);
using CuMemsetD16Fn = int (*)(DevicePointer, unsigned short, std::size_t);
using CuMemsetD32Fn = int (*)(DevicePointer, unsigned, std::size_t);
using CuMemsetD2D32Fn = int (*)(DevicePointer, std::size_t, unsigned, std::size_t, std::size_t);
using CuMemGetInfoFn = int (*)(std::size_t *, std::size_t *);
using CuModuleLoadDataFn = int (*)(void **, const void *);
using CuModuleUnloadFn = int (*)(void *);
using CuModuleGetFunctionFn = int (*)(void **, void *, const char *);
using CuLaunchKernelFn = int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 unsigned, void *, void **, void **);

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
  CuPrimaryCtxRetainFn primaryCtxRetain = nullptr;
  CuCtxSetCurrentFn ctxSetCurrent = nullptr;
  CuCtxSynchronizeFn ctxSynchronize = nullptr;
  CuMemAllocFn memAlloc = nullptr;
  CuMemFreeFn memFree = nullptr;
  CuMemcpyHtoDFn memcpyHtoD = nullptr;
  CuMemcpyDtoHFn memcpyDtoH = nullptr;
  CuMemcpyDtoDFn memcpyDtoD = nullptr;
  CuMemsetD8Fn memsetD8 = nullptr;
  CuMemsetD16Fn memsetD16 = nullptr;
  CuMemsetD32Fn memsetD32 = nullptr;
  CuMemsetD2D32Fn memsetD2D32 = nullptr;
  CuMemGetInfoFn memGetInfo = nullptr;
  CuModuleLoadDataFn moduleLoadData = nullptr;
  CuModuleUnloadFn moduleUnload = nullptr;
  CuModuleGetFunctionFn moduleGetFunction = nullptr;
  CuLaunchKernelFn launchKernel = nullptr;
};

/// The driver, opened once per process (or why not, every time).
const StatusOr<Driver> &theDriver();

/// Makes `context` current on the calling thread.
Status setCurrent(void *context);

/// The primary context of device `ordinal`, retained for the process's life.
StatusOr<void *> primaryContext(int ordinal);

/// Launches `function` (kernel `name`) on `shape` in the current context's
/// default stream; `arguments` holds the address of each parameter's value,
/// as cuLaunchKernel takes them. The shape is checked first.
Status launch(const Driver &driver, void *function, const std::string &name,
              const runtime::LaunchShape &shape, void **arguments);

} // namespace sinter::cuda::detail

#endif // SINTER_RUNTIME_LIB_CUDADRIVERAPI_H
