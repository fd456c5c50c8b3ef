//===- SimulatedDevice.cpp - the CUDA simulator as a CUDA device -----------===//
//
// Note [The CUDA device interface] (sinter/runtime/CudaExecutable.h): the
// simulator's implementation. A module is the shared library the CUDA
// target builds for the simulator (the CUDA C++ compiled by the host
// compiler with SINTER_SIMULATED, each kernel with its `<name>_simulate`
// entry, and the host's sinter_gemm_v1 for the library calls).
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Simt.h"

#include "absl/strings/str_cat.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace sinter::runtime {
namespace {

using SimulatedKernel = void (*)(const void *shape, const void *options, void *const *buffers,
                                 void *status);

class SimulatedDevice;

class SimulatedModule final : public CudaModule {
public:
  SimulatedModule(void *handle, simt::Memory &memory, std::mutex &stream)
      : handle_(handle), memory_(memory), stream_(stream) {
    hostGemm_ = reinterpret_cast<HostGemm>(dlsym(handle_, kHostGemmSymbol));
  }

  StatusOr<int> function(const std::string &name) override {
    auto kernel =
        reinterpret_cast<SimulatedKernel>(dlsym(handle_, absl::StrCat(name, "_simulate").c_str()));
    if (kernel == nullptr)
      return absl::NotFoundError(absl::StrCat("no kernel ", name));
    kernels_.push_back(kernel);
    names_.push_back(name);
    resets_.push_back(
        reinterpret_cast<void (*)()>(dlsym(handle_, absl::StrCat(name, "_reset").c_str())));
    return static_cast<int>(kernels_.size() - 1);
  }

  Status launch(int function, const LaunchShape &shape,
                const std::vector<void *> &parameters) override {
    simt::Options options;
    options.shuffled = environment().cuda_simulator_shuffled;
    options.seed = launches_.fetch_add(1);
    Status status = absl::OkStatus();
    // One stream: launches run one at a time, as a GPU's on its stream
    // (a kernel's split-reduction counters are the module's, Note [Split
    // column reductions]).
    std::lock_guard<std::mutex> lock(stream_);
    kernels_[function](&shape, &options, parameters.data(), &status);
    if (!status.ok() && resets_[function] != nullptr)
      resets_[function]();
    SINTER_RETURN_IF_ERROR(status);
    return memory_.check(names_[function]);
  }

  Status gemm(const Gemm &gemm, const float *a, const float *b, float *c,
              const float *bias) override {
    if (hostGemm_ == nullptr)
      return absl::FailedPreconditionError(
          absl::StrCat("the simulated module has no ", kHostGemmSymbol, " for matrix products"));
    SINTER_RETURN_IF_ERROR(checkGemm(gemm));
    std::lock_guard<std::mutex> lock(stream_);
    runGemmOnHost(hostGemm_, gemm, {}, a, b, c, bias);
    return memory_.check("a matrix product");
  }

private:
  void *handle_;
  simt::Memory &memory_;
  std::mutex &stream_;
  HostGemm hostGemm_ = nullptr;
  std::vector<SimulatedKernel> kernels_;
  std::vector<void (*)()> resets_; // per kernel, what zeroes its counters, or null
  std::vector<std::string> names_;
  std::atomic<uint64_t> launches_{0};
};

class SimulatedDevice final : public CudaDevice {
public:
  // The host's memory stands for the device's, in the GPU's granularity.
  SimulatedDevice() : device_{.id = {DeviceKind::Cuda, 0}, .granularity = 256} {}

  const Device &device() const override { return device_; }

  StatusOr<void *> allocate(int64_t bytes) override {
    void *memory = memory_.allocate(static_cast<std::size_t>(bytes));
    if (memory == nullptr)
      return absl::ResourceExhaustedError("the host has no memory for it");
    return memory;
  }

  void deallocate(void *memory) override { memory_.free(memory); }

  Status copyToDevice(void *device, const void *host, int64_t bytes) override {
    countCopy(bytes, 0);
    std::memcpy(device, host, static_cast<std::size_t>(bytes));
    return memory_.check("a copy to the device");
  }

  Status copyToHost(void *host, const void *device, int64_t bytes) override {
    countCopy(0, bytes);
    std::memcpy(host, device, static_cast<std::size_t>(bytes));
    return absl::OkStatus();
  }

  Status copyOnDevice(void *to, const void *from, int64_t bytes) override {
    std::memmove(to, from, static_cast<std::size_t>(bytes));
    return memory_.check("a copy on the device");
  }

  Status fill(void *device, int64_t bytes, const std::vector<uint8_t> &element) override {
    if (element.empty() || element.size() > 8)
      return absl::InvalidArgumentError(
          absl::StrCat("a fill of ", element.size(), "-byte elements"));
    auto *to = static_cast<uint8_t *>(device);
    for (int64_t i = 0; i + static_cast<int64_t>(element.size()) <= bytes;
         i += static_cast<int64_t>(element.size()))
      std::memcpy(to + i, element.data(), element.size());
    return absl::OkStatus();
  }

  StatusOr<std::unique_ptr<CudaModule>> load(const std::string &library) override {
    void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const char *why = dlerror();
      return absl::FailedPreconditionError(why ? why : "dlopen failed");
    }
    return std::make_unique<SimulatedModule>(handle, memory_, stream_);
  }

  Status synchronize() override { return absl::OkStatus(); }

  int64_t availableBytes() override { return HostAllocator::system_available(); }

private:
  Device device_;
  simt::Memory memory_;
  std::mutex stream_; // held by each launch
};

} // namespace

CudaDevice &simulatedCudaDevice() {
  static SimulatedDevice *device = new SimulatedDevice();
  return *device;
}

} // namespace sinter::runtime

/// How cudaDevice() in libsinter_runtime finds the simulator without
/// linking it (Note [Choosing a CUDA device] in CudaExecutable.h).
extern "C" sinter::runtime::CudaDevice *sinter_simulated_cuda_device_v1() {
  return &sinter::runtime::simulatedCudaDevice();
}
