//===- PhiloxDeviceTest.cpp - the kernel helpers run on a GPU as on the CPU ===//
//
// Compiles tests/cuda/philox_kernels.cu and half_kernels.cu with NVRTC to
// cubins for the GPU present, runs them on the runtime's CUDA device (the
// interface a Program runs through, Note [The CUDA device interface] in
// sinter/runtime/CudaExecutable.h), and compares every number with the
// host's: random masks, initial weights and f16/bf16 roundings must not
// depend on the backend. Without a GPU the test skips, unless
// SINTER_EXPECT_CUDA=1 (tools/gpu_check.sh) demands one.
//
//===----------------------------------------------------------------------===//
#include "common/GpuRequired.h"
#include "common/half.h"
#include "common/philox.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sinter::runtime {
namespace {

using test_support::gpuRequired;

/// The source tree's kernels/ (compiled in; SINTER_SOURCE_DIR overrides it
/// when the test binary runs from another checkout, as on a GPU machine).
std::string sourceDir() {
  const char *dir = std::getenv("SINTER_SOURCE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : SINTER_SOURCE_DIR;
}

/// tests/cuda/`file` compiled by NVRTC for the first GPU's architecture and
/// loaded on `device`.
StatusOr<std::unique_ptr<CudaModule>> loadTestKernels(CudaDevice &device, const std::string &file) {
  std::string path = sourceDir() + "/tests/cuda/" + file;
  std::ifstream in(path);
  if (!in)
    return absl::NotFoundError("cannot read " + path);
  std::stringstream source;
  source << in.rdbuf();
  SINTER_ASSIGN_OR_RETURN(std::vector<cuda::DeviceInfo> infos, cuda::listDevices());
  std::string arch =
      std::to_string(infos[0].computeCapabilityMajor * 10 + infos[0].computeCapabilityMinor);
  SINTER_ASSIGN_OR_RETURN(std::string cubin,
                          cuda::compileWithNvrtc({.path = path,
                                                  .source = source.str(),
                                                  .arch = arch,
                                                  .output = cuda::NvrtcOutput::Cubin,
                                                  .includeDirs = {sourceDir() + "/kernels"}}));
  std::string image = ::testing::TempDir() + "/" + file + ".cubin";
  std::ofstream(image, std::ios::binary) << cubin;
  return device.load(image);
}

/// `bytes` of device memory, given back when it goes.
class DeviceMemory {
public:
  DeviceMemory(CudaDevice &device, int64_t bytes) : device_(device) {
    StatusOr<void *> memory = device.allocate(bytes);
    EXPECT_TRUE(memory.ok()) << memory.status();
    memory_ = memory.ok() ? *memory : nullptr;
  }
  ~DeviceMemory() { device_.deallocate(memory_); }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  void *get() const { return memory_; }

private:
  CudaDevice &device_;
  void *memory_ = nullptr;
};

/// The first GPU, or null after recording why there is none (a failure
/// where SINTER_EXPECT_CUDA=1 demands one).
CudaDevice *gpuOrNull() {
  StatusOr<CudaDevice *> device = driverCudaDevice(0);
  if (device.ok())
    return *device;
  EXPECT_FALSE(gpuRequired()) << device.status();
  return nullptr;
}

#define SINTER_GPU_OR_SKIP(device)                                                                 \
  CudaDevice *device = gpuOrNull();                                                                \
  if (device == nullptr)                                                                           \
  GTEST_SKIP() << "no GPU: " << driverCudaDevice(0).status()

/// Launches kernel `name` of `module` over a grid that a grid-stride loop
/// goes round, and waits for it.
Status launchAndWait(CudaDevice &device, CudaModule &module, const std::string &name,
                     const std::vector<void *> &parameters) {
  SINTER_ASSIGN_OR_RETURN(int function, module.function(name));
  LaunchShape shape;
  shape.grid[0] = 264;
  shape.block[0] = 256;
  SINTER_RETURN_IF_ERROR(module.launch(function, shape, parameters));
  return device.synchronize();
}

TEST(PhiloxOnDevice, EveryNumberEqualsTheHosts) {
  SINTER_GPU_OR_SKIP(device);
  StatusOr<std::unique_ptr<CudaModule>> module = loadTestKernels(*device, "philox_kernels.cu");
  ASSERT_TRUE(module.ok()) << module.status();

  // More elements than threads, so the grid-stride loop goes round.
  long long n = (1 << 20) + 3;
  unsigned long long seed = 0x5eed, stream = 7;
  int64_t bytes = n * static_cast<int64_t>(sizeof(float));
  const unsigned long long draw[] = {seed, stream, static_cast<unsigned long long>(n)};
  DeviceMemory uniform(*device, bytes), normal(*device, bytes), drawOnDevice(*device, sizeof draw);
  ASSERT_TRUE(device->copyToDevice(drawOnDevice.get(), draw, sizeof draw).ok());
  Status launched = launchAndWait(*device, **module, "philox_fill",
                                  {uniform.get(), normal.get(), drawOnDevice.get()});
  ASSERT_TRUE(launched.ok()) << launched;
  std::vector<float> gotUniform(n), gotNormal(n);
  ASSERT_TRUE(device->copyToHost(gotUniform.data(), uniform.get(), bytes).ok());
  ASSERT_TRUE(device->copyToHost(gotNormal.data(), normal.get(), bytes).ok());

  long long uniformMismatches = 0, normalMismatches = 0;
  double worstNormal = 0;
  for (long long i = 0; i < n; ++i) {
    auto index = static_cast<unsigned long long>(i);
    // Uniforms are integer arithmetic then one exact scaling: bit for bit.
    if (gotUniform[i] != kernels::philoxUniform(seed, stream, index))
      ++uniformMismatches;
    // Normals go through log/sqrt/cos, whose last bits differ between CUDA's
    // and glibc's libm (each within 2 ulp of exact).
    // Element by element, so that a NaN counts (std::max would skip it).
    float want = kernels::philoxNormal(seed, stream, index);
    double relative = std::abs(double(gotNormal[i]) - want) / std::max(1.0, std::abs(double(want)));
    if (!(relative <= 4e-6))
      ++normalMismatches;
    else
      worstNormal = std::max(worstNormal, relative);
  }
  EXPECT_EQ(uniformMismatches, 0);
  EXPECT_EQ(normalMismatches, 0) << "normal draws more than 4e-6 (relative) from the host's";
  std::printf("normal draws within %.2g (relative) of the host's\n", worstNormal);
}

// The f16 and bf16 conversions every kernel uses (kernels/common/half.h)
// give the host's bits on the GPU: the same integer code, compiled by NVRTC.
TEST(HalfOnGpu, EveryConversionEqualsTheHosts) {
  SINTER_GPU_OR_SKIP(device);
  StatusOr<std::unique_ptr<CudaModule>> module = loadTestKernels(*device, "half_kernels.cu");
  ASSERT_TRUE(module.ok()) << module.status();
  long long n = (1ll << 32) / 4099 + 1; // i * 4099 for every i below passes 2^32
  DeviceMemory f16(*device, n * 2), bf16(*device, n * 2);
  DeviceMemory fromF16(*device, 65536 * sizeof(float)), fromBf16(*device, 65536 * sizeof(float));
  DeviceMemory count(*device, sizeof n);
  ASSERT_TRUE(device->copyToDevice(count.get(), &n, sizeof n).ok());
  Status launched =
      launchAndWait(*device, **module, "half_conversions_all",
                    {f16.get(), bf16.get(), fromF16.get(), fromBf16.get(), count.get()});
  ASSERT_TRUE(launched.ok()) << launched;
  std::vector<unsigned short> gotF16(n), gotBf16(n);
  std::vector<float> gotFromF16(65536), gotFromBf16(65536);
  ASSERT_TRUE(device->copyToHost(gotF16.data(), f16.get(), n * 2).ok());
  ASSERT_TRUE(device->copyToHost(gotBf16.data(), bf16.get(), n * 2).ok());
  ASSERT_TRUE(device->copyToHost(gotFromF16.data(), fromF16.get(), 65536 * sizeof(float)).ok());
  ASSERT_TRUE(device->copyToHost(gotFromBf16.data(), fromBf16.get(), 65536 * sizeof(float)).ok());
  long long mismatches = 0;
  for (long long i = 0; i < n; ++i) {
    float x =
        sinter_bits_float(static_cast<unsigned>(static_cast<unsigned long long>(i) * 4099ull));
    mismatches += gotF16[i] != sinter_f16_bits(x);
    mismatches += gotBf16[i] != sinter_bf16_bits(x);
  }
  for (unsigned h = 0; h < 65536; ++h) {
    auto bits = static_cast<unsigned short>(h);
    mismatches += sinter_float_bits(gotFromF16[h]) != sinter_float_bits(sinter_f16_float(bits));
    mismatches += sinter_float_bits(gotFromBf16[h]) != sinter_float_bits(sinter_bf16_float(bits));
  }
  EXPECT_EQ(mismatches, 0) << "of " << 2 * n + 2 * 65536 << " conversions";
}

// A kernel the module lacks is named; a launch outside CUDA's limits is
// refused naming the kernel, before the driver sees it.
TEST(PhiloxOnDevice, LaunchErrorsNameTheKernel) {
  SINTER_GPU_OR_SKIP(device);
  StatusOr<std::unique_ptr<CudaModule>> module = loadTestKernels(*device, "philox_kernels.cu");
  ASSERT_TRUE(module.ok()) << module.status();
  StatusOr<int> missing = (*module)->function("philox_fil");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("philox_fil"), std::string::npos);
  StatusOr<int> function = (*module)->function("philox_fill");
  ASSERT_TRUE(function.ok()) << function.status();
  LaunchShape tooWide;
  tooWide.block[0] = 2048;
  Status status = (*module)->launch(*function, tooWide, {nullptr, nullptr, nullptr});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("philox_fill"), std::string::npos) << status;
}

TEST(PhiloxOnDevice, AMissingDeviceIsNamed) {
  StatusOr<CudaDevice *> device = driverCudaDevice(1000);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(std::string(device.status().message()).find("no CUDA device"), std::string::npos)
      << device.status();
}

} // namespace
} // namespace sinter::runtime
