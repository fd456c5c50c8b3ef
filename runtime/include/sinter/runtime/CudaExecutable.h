//===- CudaExecutable.h - a Program on a CUDA device -------------*- C++ -*-===//
//
// Note [The CUDA device interface]
// What a Program needs of a CUDA device is one interface, CudaDevice, with
// two implementations: the CUDA driver's (a GPU: cuMemAlloc, cuMemcpy, a
// cubin module, cuBLAS for the library calls; Note [The driver's device] in
// runtime/lib/DriverDevice.cpp) and the CUDA
// simulator's (Note [The CUDA simulator] in sinter/runtime/Simt.h: device
// memory is host memory with guard zones and poisoning after free, a
// module is the same CUDA C++ built by the host compiler, and the library
// calls run on the host's GEMM built into that module). CudaExecutable
// runs a Program through it and names neither, so what the simulator runs
// in CI is the executable a GPU runs. Every operation is in stream order
// on the device's one stream; the simulator's are synchronous.
//
// Where a Program's values are: its arena, taken from the device for the
// run; its arguments and results, in device memory the caller holds
// (runOnDevice), so that values stay on the device from step to step: a
// tensor's value (lazy::Value's device form, Note [Two forms of a value])
// and a StepSession's state are copied to the host only when they are read.
// run() is the same with host memory, copied in before and out after. A
// launch that fails (an out-of-bounds write on the simulator, a launch
// error on a GPU) stops the run with the kernel's label and its user's
// lines. Every copy between host and device is counted (traffic()), which
// the tests of device-resident values read.
//
// Note [Steps in stream order]
// A step on a GPU is queued, not waited for: runOnDevice returns once its
// launches are issued, so the host records and compiles the next step while
// the device runs this one (as PyTorch's CUDA ops and PyTorch/XLA's
// asynchronous execution). Everything on the device is in the order of its
// one stream, so no wait is needed for correctness: memory a step gives
// back (its arena, a value that died) is handed out again only to work
// queued after it; a copy to the host waits for what came before it. The
// host waits only where it reads: a copy to the host, synchronize(). The
// cost is where a kernel's fault is reported: at the next wait, naming
// that wait, unless SINTER_CUDA_SYNC=1, which waits for every launch so
// the fault is reported at its kernel with its user's lines. (The
// simulator runs every launch as it is issued.)
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_CUDAEXECUTABLE_H
#define SINTER_RUNTIME_CUDAEXECUTABLE_H

#include "sinter/runtime/Device.h"
#include "sinter/runtime/Gemm.h"
#include "sinter/runtime/LaunchShape.h"
#include "sinter/runtime/Program.h"
#include "sinter/runtime/Status.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sinter::runtime {

/// A Program's kernels loaded on a device (Program::library: a cubin, or
/// the simulator's shared library), and the library calls run with them.
class CudaModule {
public:
  virtual ~CudaModule() = default;
  /// The function of kernel `name`, or NotFound.
  virtual StatusOr<int> function(const std::string &name) = 0;
  /// Launches `function` on `shape` with `parameters` (device pointers, in
  /// the kernel's parameter order).
  virtual Status launch(int function, const LaunchShape &shape,
                        const std::vector<void *> &parameters) = 0;
  /// C = op(A) op(B) (+ bias) of device memory (Note [Matrix products as
  /// data] in sinter/runtime/Gemm.h).
  virtual Status gemm(const Gemm &gemm, const float *a, const float *b, float *c,
                      const float *bias) = 0;
};

class CudaDevice {
public:
  /// Bytes copied between the host and the device since the process began.
  struct Traffic {
    int64_t toDevice = 0;
    int64_t toHost = 0;
  };

  virtual ~CudaDevice() = default;
  virtual const Device &device() const = 0;
  /// `bytes` of device memory, aligned to the device's granularity, or
  /// ResourceExhausted.
  virtual StatusOr<void *> allocate(int64_t bytes) = 0;
  virtual void deallocate(void *memory) = 0;
  virtual Status copyToDevice(void *device, const void *host, int64_t bytes) = 0;
  virtual Status copyToHost(void *host, const void *device, int64_t bytes) = 0;
  virtual Status copyOnDevice(void *to, const void *from, int64_t bytes) = 0;
  /// `element` (1 to 8 bytes) repeated over `bytes` of device memory.
  virtual Status fill(void *device, int64_t bytes, const std::vector<uint8_t> &element) = 0;
  /// Loads a Program's kernel library.
  virtual StatusOr<std::unique_ptr<CudaModule>> load(const std::string &library) = 0;
  /// Waits for everything issued so far; the first error of a kernel
  /// since the last call.
  virtual Status synchronize() = 0;
  /// Bytes the device could give a step now: its free memory and the
  /// cached segments with no block in use (the simulator: the host's).
  virtual int64_t availableBytes() = 0;
  Traffic traffic() const {
    return {toDevice_.load(std::memory_order_relaxed), toHost_.load(std::memory_order_relaxed)};
  }

protected:
  /// Called by copyToDevice and copyToHost.
  void countCopy(int64_t toDevice, int64_t toHost) {
    toDevice_.fetch_add(toDevice, std::memory_order_relaxed);
    toHost_.fetch_add(toHost, std::memory_order_relaxed);
  }

private:
  std::atomic<int64_t> toDevice_{0}, toHost_{0};
};

/// The CUDA simulator as a device (one per process; in
/// libsinter_cuda_simulator). Each launch is checked as it ends: guard
/// zones and freed memory (an error names the kernel). With
/// SINTER_CUDA_SIMULATOR=shuffled every launch runs in the simulator's
/// checking mode (the threads between barriers, and the blocks, in a
/// random order).
CudaDevice &simulatedCudaDevice();

/// GPU `ordinal` as a device, through the CUDA driver and cuBLAS (Note [The
/// driver's device] in runtime/lib/DriverDevice.cpp); one per ordinal, for
/// the process's life. Fails naming what is missing (no driver, no such
/// device).
StatusOr<CudaDevice *> driverCudaDevice(int ordinal);

/// Note [Choosing a CUDA device]
/// `cuda:ordinal` as the process sees it: with SINTER_CUDA_SIMULATOR, the
/// simulator (its one device, cuda:0), opened from libsinter_cuda_simulator
/// beside libsinter_runtime when the process has not loaded it (the runtime
/// never links it, so that a GPU machine needs no Boost.Context); else the
/// GPU through the driver. Every path to a CUDA device (compiled steps,
/// eager ops, artifacts, the C API) goes through here.
StatusOr<CudaDevice *> cudaDevice(int ordinal);

/// A Program loaded on a CUDA device, ready to run.
class CudaExecutable final {
public:
  /// Checks `program` (validateProgram), loads its library on `device`
  /// and finds every kernel.
  static StatusOr<std::unique_ptr<CudaExecutable>> load(Program program, CudaDevice &device);
  CudaExecutable(const CudaExecutable &) = delete;
  CudaExecutable &operator=(const CudaExecutable &) = delete;

  /// Runs the step on values in device memory: `arguments[i]` is
  /// argumentBytes(i) bytes of this device's memory, `results[i]`
  /// resultBytes(i) bytes the result is written into (a donated result's
  /// is its argument's, which the step overwrites; Note [Donation]). Only
  /// the arena is taken from the device for the run, and given back at its
  /// end. Asynchronous (Note [Steps in stream order]): the run may still be
  /// going on the device when this returns.
  Status runOnDevice(const std::vector<const void *> &arguments,
                     const std::vector<void *> &results);
  /// The same on host memory: each argument copied to the device, each
  /// result copied back into `results[i]` (a donated result's pointer may
  /// be its argument's).
  Status run(const std::vector<const void *> &arguments, const std::vector<void *> &results);

  int64_t argumentBytes(size_t i) const { return bytesOf(program_.arguments[i]); }
  int64_t resultBytes(size_t i) const { return bytesOf(program_.results[i]); }
  const Program &program() const { return program_; }
  const Device &device() const { return device_.device(); }
  CudaDevice &cudaDevice() const { return device_; }

private:
  CudaExecutable(Program program, CudaDevice &device)
      : program_(std::move(program)), device_(device) {}
  int64_t bytesOf(int buffer) const { return program_.buffers[buffer].bytes; }

  Program program_;
  CudaDevice &device_;
  std::unique_ptr<CudaModule> module_;
  /// Per kernel number, its function (-1 for library calls' numbers).
  std::vector<int> functions_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_CUDAEXECUTABLE_H
