//===- DriverDevice.cpp - a GPU as a CUDA device, through the driver -----===//
//
// Note [The driver's device]
// The implementation of Note [The CUDA device interface]
// (sinter/runtime/CudaExecutable.h) on a GPU: the CUDA driver, opened at
// first use (Note [Lazy CUDA]), and cuBLAS, opened the same way at the first
// matrix product (libcublas.so.13, or SINTER_CUBLAS).
// - Memory: cuMemAlloc'd segments cut into blocks and cached, as the host's
//   (Note [Blocks and segments] in sinter/runtime/Allocator.h: best fit,
//   freed neighbours merged, 256-byte granularity). A training step asks
//   for the same arena and values every step, so after the first step no
//   step calls cuMemAlloc or cuMemFree, which synchronise the device; when
//   cuMemAlloc runs out, the free segments are freed and it is asked once
//   more, then any free block that holds the request is used.
// - A module is the Program's cubin (the CUDA target's GPU build, Note [The
//   CUDA target]), loaded with cuModuleLoadData; its functions are looked
//   up once, when the executable loads.
// - Everything is in the order of the legacy default stream (Note [Steps
//   in stream order] in sinter/runtime/CudaExecutable.h: a step is queued,
//   not waited for); copies from and to pageable host memory wait for the
//   work before them, and synchronize() waits for the kernels. With
//   SINTER_CUDA_SYNC=1 every launch is waited for, so a kernel's fault is
//   reported at that kernel (the executable names it and its user's lines)
//   rather than at the next wait.
// - Matrix products (Note [Matrix products as data]) are handed to
//   cublasSgemmStridedBatched_64 with the descriptor's own fields, which
//   are cuBLAS's; cuBLAS's default math mode computes in full f32 (TF32 would
//   need an explicit setting). The bias epilogue is one more product of
//   rank one, C += bias 1ᵀ (k = 1, beta = 1, over the same batch), which
//   keeps the sum in a fixed order. One cuBLAS handle per device, for the
//   process's life. A product marked tf32 (CompilerConfig::allow_tf32) runs
//   in CUBLAS_TF32_TENSOR_OP_MATH, every other one and every bias in
//   CUBLAS_DEFAULT_MATH: the handle's mode is set before each call.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/CudaExecutable.h"

#include "CudaDriverApi.h"

#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Files.h"

#include "absl/strings/str_cat.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

namespace sinter::runtime {
namespace {

using cuda::DevicePointer;
using cuda::detail::Driver;

DevicePointer address(const void *pointer) { return reinterpret_cast<DevicePointer>(pointer); }

/// The result of `call`, a driver call that waits for the work queued
/// before it: with steps in stream order (Note [Steps in stream order] in
/// sinter/runtime/CudaExecutable.h) an error may be an earlier kernel's.
Status atWait(int result, const char *call) {
  if (result == 0)
    return absl::OkStatus();
  Status status = cuda::driverError(result, call, __FILE__, __LINE__);
  if (environment().cuda_sync)
    return status;
  return Status(status.code(),
                absl::StrCat(status.message(),
                             " (a kernel queued before this wait may have caused it: "
                             "SINTER_CUDA_SYNC=1 reports a fault at its kernel)"));
}

//===----------------------------------------------------------------------===//
// cuBLAS, opened at the first product
//===----------------------------------------------------------------------===//

using CublasCreateFn = int (*)(void **);
using CublasSetMathModeFn = int (*)(void *, int);
using CublasStatusStringFn = const char *(*)(int);
using CublasSgemmFn = int (*)(void *, int, int, int64_t, int64_t, int64_t, const float *,
                              const float *, int64_t, long long, const float *, int64_t, long long,
                              const float *, float *, int64_t, long long, int64_t);

struct Cublas {
  CublasCreateFn create = nullptr;
  CublasSetMathModeFn setMathMode = nullptr;
  CublasStatusStringFn statusString = nullptr;
  CublasSgemmFn sgemm = nullptr;
};

StatusOr<Cublas> openCublas() {
  const std::string &override = environment().cublas_library;
  std::vector<std::string> candidates =
      override.empty()
          ? std::vector<std::string>{"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13"}
          : std::vector<std::string>{override};
  void *handle = nullptr;
  std::string why;
  for (const std::string &candidate : candidates) {
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr)
      break;
    const char *error = dlerror();
    absl::StrAppend(&why, why.empty() ? "" : "; ", error != nullptr ? error : candidate);
  }
  if (handle == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(
        "cuBLAS, which runs the step's matrix products on the GPU, could not be loaded (", why,
        "); install the CUDA toolkit's cuBLAS (NVIDIA's libcublas package), or name the library "
        "in SINTER_CUBLAS"));
  Cublas cublas;
  cublas.create = reinterpret_cast<CublasCreateFn>(dlsym(handle, "cublasCreate_v2"));
  cublas.setMathMode = reinterpret_cast<CublasSetMathModeFn>(dlsym(handle, "cublasSetMathMode"));
  cublas.statusString =
      reinterpret_cast<CublasStatusStringFn>(dlsym(handle, "cublasGetStatusString"));
  cublas.sgemm = reinterpret_cast<CublasSgemmFn>(dlsym(handle, "cublasSgemmStridedBatched_64"));
  if (cublas.create == nullptr || cublas.setMathMode == nullptr || cublas.statusString == nullptr ||
      cublas.sgemm == nullptr)
    return absl::FailedPreconditionError(
        "the cuBLAS library loaded has no cublasCreate_v2, cublasSetMathMode, "
        "cublasGetStatusString or cublasSgemmStridedBatched_64; Sinter needs cuBLAS 12 or later");
  return cublas;
}

const StatusOr<Cublas> &theCublas() {
  static const StatusOr<Cublas> *cublas = new StatusOr<Cublas>(openCublas());
  return *cublas;
}

//===----------------------------------------------------------------------===//
// The device and its module
//===----------------------------------------------------------------------===//

class DriverDevice;

class DriverModule final : public CudaModule {
public:
  DriverModule(DriverDevice &device, void *module) : device_(device), module_(module) {}
  ~DriverModule() override;

  StatusOr<int> function(const std::string &name) override;
  Status launch(int function, const LaunchShape &shape,
                const std::vector<void *> &parameters) override;
  Status gemm(const Gemm &gemm, const float *a, const float *b, float *c,
              const float *bias) override;

private:
  DriverDevice &device_;
  void *module_;
  std::vector<void *> functions_;
  std::vector<std::string> names_;
};

class DriverDevice final : public CudaDevice {
public:
  DriverDevice(const Driver &driver, void *context, const cuda::DeviceInfo &info)
      : driver_(driver),
        context_(context), device_{.id = {DeviceKind::Cuda, info.ordinal}, .granularity = 256} {}

  const Device &device() const override { return device_; }
  const Driver &driver() const { return driver_; }

  Status makeCurrent() const { return cuda::detail::setCurrent(context_); }

  StatusOr<void *> allocate(int64_t bytes) override {
    if (void *block = cache_.allocate(std::max<int64_t>(bytes, 1)))
      return block;
    return absl::ResourceExhaustedError(
        cuda::driverError(lastAllocation_, "cuMemAlloc", __FILE__, __LINE__).message());
  }

  void deallocate(void *memory) override {
    if (memory != nullptr)
      cache_.deallocate(memory);
  }

  Status copyToDevice(void *device, const void *host, int64_t bytes) override {
    if (bytes <= 0)
      return absl::OkStatus();
    SINTER_RETURN_IF_ERROR(makeCurrent());
    countCopy(bytes, 0);
    return atWait(driver_.memcpyHtoD(address(device), host, static_cast<std::size_t>(bytes)),
                  "cuMemcpyHtoD");
  }

  Status copyToHost(void *host, const void *device, int64_t bytes) override {
    if (bytes <= 0)
      return absl::OkStatus();
    SINTER_RETURN_IF_ERROR(makeCurrent());
    countCopy(0, bytes);
    return atWait(driver_.memcpyDtoH(host, address(device), static_cast<std::size_t>(bytes)),
                  "cuMemcpyDtoH");
  }

  Status copyOnDevice(void *to, const void *from, int64_t bytes) override {
    if (bytes <= 0)
      return absl::OkStatus();
    SINTER_RETURN_IF_ERROR(makeCurrent());
    SINTER_CUDA_RETURN_IF_ERROR(
        driver_.memcpyDtoD(address(to), address(from), static_cast<std::size_t>(bytes)));
    return absl::OkStatus();
  }

  Status fill(void *device, int64_t bytes, const std::vector<uint8_t> &element) override {
    size_t size = element.size();
    if (size != 1 && size != 2 && size != 4 && size != 8)
      return absl::InvalidArgumentError(absl::StrCat("a fill of ", size, "-byte elements"));
    if (bytes <= 0)
      return absl::OkStatus();
    SINTER_RETURN_IF_ERROR(makeCurrent());
    auto count = static_cast<std::size_t>(bytes) / size;
    DevicePointer to = address(device);
    uint32_t word[2] = {0, 0};
    std::memcpy(word, element.data(), size);
    switch (size) {
    case 1:
      SINTER_CUDA_RETURN_IF_ERROR(driver_.memsetD8(to, element[0], count));
      break;
    case 2:
      SINTER_CUDA_RETURN_IF_ERROR(driver_.memsetD16(to, static_cast<uint16_t>(word[0]), count));
      break;
    case 4:
      SINTER_CUDA_RETURN_IF_ERROR(driver_.memsetD32(to, word[0], count));
      break;
    default:
      // Each half of the 8-byte elements as a column of a pitched fill:
      // rows of one 4-byte word, 8 bytes apart.
      for (int half = 0; half < 2; ++half)
        SINTER_CUDA_RETURN_IF_ERROR(driver_.memsetD2D32(to + 4 * half, 8, word[half], 1, count));
      break;
    }
    return absl::OkStatus();
  }

  StatusOr<std::unique_ptr<CudaModule>> load(const std::string &library) override {
    SINTER_ASSIGN_OR_RETURN(std::string image, readWholeFile(library, "the CUDA module"));
    SINTER_RETURN_IF_ERROR(makeCurrent());
    void *module = nullptr;
    SINTER_CUDA_RETURN_IF_ERROR(driver_.moduleLoadData(&module, image.data()));
    return std::make_unique<DriverModule>(*this, module);
  }

  Status synchronize() override {
    SINTER_RETURN_IF_ERROR(makeCurrent());
    return atWait(driver_.ctxSynchronize(), "cuCtxSynchronize");
  }

  int64_t availableBytes() override {
    std::size_t free = 0, total = 0;
    if (!makeCurrent().ok() || driver_.memGetInfo(&free, &total) != 0)
      return -1;
    // Free blocks between blocks in use may be too small or scattered for a
    // step's arena: only whole free segments count.
    return static_cast<int64_t>(free) + cache_.stats().releasable;
  }

  /// The device's cuBLAS handle, made at the first product.
  StatusOr<void *> cublasHandle() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cublasHandle_ == nullptr) {
      SINTER_ASSIGN_OR_RETURN(const Cublas &cublas, theCublas());
      SINTER_RETURN_IF_ERROR(makeCurrent());
      if (int status = cublas.create(&cublasHandle_); status != 0)
        return absl::InternalError(
            absl::StrCat("cublasCreate failed: ", cublas.statusString(status)));
    }
    return cublasHandle_;
  }

  /// `count` ones in device memory (the bias epilogue's right operand).
  StatusOr<const float *> ones(int64_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (onesCount_ < count) {
      SINTER_RETURN_IF_ERROR(makeCurrent());
      if (ones_ != 0)
        SINTER_CUDA_RETURN_IF_ERROR(driver_.memFree(ones_));
      ones_ = 0, onesCount_ = 0;
      SINTER_CUDA_RETURN_IF_ERROR(
          driver_.memAlloc(&ones_, static_cast<std::size_t>(count) * sizeof(float)));
      constexpr uint32_t kOne = 0x3f800000; // 1.0f
      SINTER_CUDA_RETURN_IF_ERROR(driver_.memsetD32(ones_, kOne, static_cast<std::size_t>(count)));
      onesCount_ = count;
    }
    return reinterpret_cast<const float *>(ones_);
  }

private:
  const Driver &driver_;
  void *context_;
  Device device_;
  std::mutex mutex_;
  /// The last cuMemAlloc's result, for the error of a request that failed.
  static inline thread_local int lastAllocation_ = 0;
  /// Device memory (device addresses as pointers: never dereferenced here).
  BlockCache cache_{{
      .acquire = [this](int64_t bytes) -> void * {
        DevicePointer segment = 0;
        lastAllocation_ = makeCurrent().ok()
                              ? driver_.memAlloc(&segment, static_cast<std::size_t>(bytes))
                              : cuda::detail::kCudaErrorInvalidContext;
        return lastAllocation_ == 0 ? reinterpret_cast<void *>(segment) : nullptr;
      },
      .release =
          [this](void *segment, int64_t) {
            (void)(makeCurrent().ok() && driver_.memFree(address(segment)));
          },
      .alignment = 256,
  }};
  void *cublasHandle_ = nullptr;
  DevicePointer ones_ = 0;
  int64_t onesCount_ = 0;
};

DriverModule::~DriverModule() {
  if (device_.makeCurrent().ok())
    (void)device_.driver().moduleUnload(module_); // a failure here has no one to report to
}

StatusOr<int> DriverModule::function(const std::string &name) {
  SINTER_RETURN_IF_ERROR(device_.makeCurrent());
  void *function = nullptr;
  if (device_.driver().moduleGetFunction(&function, module_, name.c_str()) != 0)
    return absl::NotFoundError(absl::StrCat("no kernel ", name));
  functions_.push_back(function);
  names_.push_back(name);
  return static_cast<int>(functions_.size() - 1);
}

Status DriverModule::launch(int function, const LaunchShape &shape,
                            const std::vector<void *> &parameters) {
  SINTER_RETURN_IF_ERROR(device_.makeCurrent());
  // cuLaunchKernel takes the address of each argument's value.
  std::vector<void *> arguments(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i)
    arguments[i] = const_cast<void **>(&parameters[i]);
  SINTER_RETURN_IF_ERROR(cuda::detail::launch(device_.driver(), functions_[function],
                                              names_[function], shape, arguments.data()));
  if (environment().cuda_sync)
    return device_.synchronize();
  return absl::OkStatus();
}

Status DriverModule::gemm(const Gemm &gemm, const float *a, const float *b, float *c,
                          const float *bias) {
  SINTER_RETURN_IF_ERROR(checkGemm(gemm));
  SINTER_ASSIGN_OR_RETURN(const Cublas &cublas, theCublas());
  SINTER_ASSIGN_OR_RETURN(void *handle, device_.cublasHandle());
  // cublasMath_t: CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH.
  constexpr int kDefaultMath = 0, kTf32Math = 3;
  auto call = [&](int math, int transa, int transb, int64_t k, float alpha, const float *left,
                  int64_t lda, int64_t strideA, const float *right, int64_t ldb, int64_t strideB,
                  float beta) -> Status {
    if (int status = cublas.setMathMode(handle, math); status != 0)
      return absl::InternalError(absl::StrCat("cublasSetMathMode (", describe(gemm),
                                              ") failed: ", cublas.statusString(status)));
    int status = cublas.sgemm(handle, transa, transb, gemm.m, gemm.n, k, &alpha, left, lda, strideA,
                              right, ldb, strideB, &beta, c, gemm.ldc, gemm.strideC, gemm.batch);
    if (status != 0)
      return absl::InternalError(absl::StrCat("cublasSgemmStridedBatched_64 (", describe(gemm),
                                              ") failed: ", cublas.statusString(status)));
    return absl::OkStatus();
  };
  SINTER_RETURN_IF_ERROR(call(gemm.tf32 ? kTf32Math : kDefaultMath, gemm.transa, gemm.transb,
                              gemm.k, gemm.alpha, a, gemm.lda, gemm.strideA, b, gemm.ldb,
                              gemm.strideB, gemm.beta));
  if (gemm.epilogue == Gemm::Epilogue::Bias) {
    // C += bias 1ᵀ: bias is m x 1, the ones 1 x n, shared by the batch.
    SINTER_ASSIGN_OR_RETURN(const float *ones, device_.ones(gemm.n));
    SINTER_RETURN_IF_ERROR(
        call(kDefaultMath, 0, 0, 1, 1.0f, bias, std::max<int64_t>(gemm.m, 1), 0, ones, 1, 0, 1.0f));
  }
  if (environment().cuda_sync)
    return device_.synchronize();
  return absl::OkStatus();
}

/// The simulator's device from libsinter_cuda_simulator: the process's
/// copy when it is loaded, else the library beside this one (RTLD_LOCAL:
/// the simulated kernel libraries name it as a dependency and get this
/// copy; a global open would make glibc grow its global scope, which it
/// never frees).
StatusOr<CudaDevice *> simulatorDevice() {
  using Entry = CudaDevice *(*)();
  constexpr const char *kEntry = "sinter_simulated_cuda_device_v1";
  if (auto entry = reinterpret_cast<Entry>(dlsym(RTLD_DEFAULT, kEntry)))
    return entry();
  Dl_info self;
  std::string library = "libsinter_cuda_simulator.so";
  if (dladdr(reinterpret_cast<void *>(&simulatorDevice), &self) != 0 && self.dli_fname != nullptr) {
    std::string path = self.dli_fname;
    library = path.substr(0, path.rfind('/') + 1) + library;
  }
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char *why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "SINTER_CUDA_SIMULATOR is set but the CUDA simulator's library could not be loaded (",
        why != nullptr ? why : library, "); install it beside libsinter_runtime"));
  }
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kEntry));
  if (entry == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(library, " has no ", kEntry));
  return entry();
}

} // namespace

StatusOr<CudaDevice *> cudaDevice(int ordinal) {
  if (!environment().cuda_simulator)
    return driverCudaDevice(ordinal);
  if (ordinal != 0)
    return absl::NotFoundError(absl::StrCat("cuda:", ordinal,
                                            " requested but the CUDA simulator "
                                            "(SINTER_CUDA_SIMULATOR) has one device, cuda:0"));
  return simulatorDevice();
}

StatusOr<CudaDevice *> driverCudaDevice(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<DriverDevice>> *devices =
      new std::map<int, std::unique_ptr<DriverDevice>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = devices->find(ordinal); found != devices->end())
    return found->second.get();
  SINTER_ASSIGN_OR_RETURN(std::vector<cuda::DeviceInfo> infos, cuda::listDevices());
  if (ordinal < 0 || ordinal >= static_cast<int>(infos.size()))
    return absl::NotFoundError(absl::StrCat("no CUDA device ", ordinal, ": the driver reports ",
                                            infos.size(), " device(s)"));
  SINTER_ASSIGN_OR_RETURN(void *context, cuda::detail::primaryContext(ordinal));
  auto device = std::make_unique<DriverDevice>(*cuda::detail::theDriver(), context, infos[ordinal]);
  CudaDevice *opened = device.get();
  devices->emplace(ordinal, std::move(device));
  return opened;
}

} // namespace sinter::runtime
