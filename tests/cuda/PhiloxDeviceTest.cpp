//===- PhiloxDeviceTest.cpp - the kernel helpers run on a GPU as on the CPU ===//
//
// Compiles tests/cuda/philox_kernels.cu and half_kernels.cu with NVRTC to
// cubins for the GPU present, runs them through the runtime's CUDA driver
// API, and compares every number with the host's: random masks, initial
// weights and f16/bf16 roundings must not depend on the backend. Without a GPU the test skips,
// unless SINTER_EXPECT_CUDA=1 (tools/gpu_check.sh) demands one.
//
//===----------------------------------------------------------------------===//
#include "common/GpuRequired.h"
#include "common/half.h"
#include "common/philox.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sinter::cuda {
namespace {

using test_support::gpuRequired;

/// The source tree's kernels/ (compiled in; SINTER_SOURCE_DIR overrides it
/// when the test binary runs from another checkout, as on a GPU machine).
std::string sourceDir() {
  const char *dir = std::getenv("SINTER_SOURCE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : SINTER_SOURCE_DIR;
}

/// tests/cuda/`file` compiled by NVRTC for `device`'s architecture, loaded.
StatusOr<Module> loadTestKernels(const Device &device, const std::string &file) {
  std::string path = sourceDir() + "/tests/cuda/" + file;
  std::ifstream in(path);
  if (!in)
    return absl::NotFoundError("cannot read " + path);
  std::stringstream source;
  source << in.rdbuf();
  std::string arch = std::to_string(device.info().computeCapabilityMajor) +
                     std::to_string(device.info().computeCapabilityMinor);
  StatusOr<std::string> cubin = compileWithNvrtc({.path = path,
                                                  .source = source.str(),
                                                  .arch = arch,
                                                  .output = NvrtcOutput::Cubin,
                                                  .includeDirs = {sourceDir() + "/kernels"}});
  if (!cubin.ok())
    return cubin.status();
  return device.load(*cubin);
}

TEST(PhiloxOnDevice, EveryNumberEqualsTheHosts) {
  StatusOr<Device> device = Device::open(0);
  if (!device.ok()) {
    ASSERT_FALSE(gpuRequired()) << device.status();
    GTEST_SKIP() << device.status();
  }
  StatusOr<Module> module = loadTestKernels(*device, "philox_kernels.cu");
  ASSERT_TRUE(module.ok()) << module.status();

  // More elements than threads, so the grid-stride loop goes round.
  long long n = (1 << 20) + 3;
  unsigned long long seed = 0x5eed, stream = 7;
  std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  StatusOr<DeviceBuffer> uniform = device->allocate(bytes);
  StatusOr<DeviceBuffer> normal = device->allocate(bytes);
  ASSERT_TRUE(uniform.ok() && normal.ok()) << uniform.status() << normal.status();
  DevicePointer uniformAddress = uniform->address(), normalAddress = normal->address();
  void *arguments[] = {&uniformAddress, &normalAddress, &seed, &stream, &n};
  runtime::LaunchShape shape;
  shape.grid[0] = 264;
  shape.block[0] = 256;
  ASSERT_TRUE(module->launch("philox_fill", shape, arguments).ok());
  ASSERT_TRUE(device->synchronize().ok());
  std::vector<float> gotUniform(n), gotNormal(n);
  ASSERT_TRUE(uniform->copyToHost(gotUniform.data(), bytes).ok());
  ASSERT_TRUE(normal->copyToHost(gotNormal.data(), bytes).ok());

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
  StatusOr<Device> device = Device::open(0);
  if (!device.ok()) {
    ASSERT_FALSE(gpuRequired()) << device.status();
    GTEST_SKIP() << device.status();
  }
  StatusOr<Module> module = loadTestKernels(*device, "half_kernels.cu");
  ASSERT_TRUE(module.ok()) << module.status();
  long long n = (1ll << 32) / 4099 + 1; // i * 4099 for every i below passes 2^32
  StatusOr<DeviceBuffer> f16 = device->allocate(static_cast<std::size_t>(n) * 2);
  StatusOr<DeviceBuffer> bf16 = device->allocate(static_cast<std::size_t>(n) * 2);
  StatusOr<DeviceBuffer> fromF16 = device->allocate(65536 * sizeof(float));
  StatusOr<DeviceBuffer> fromBf16 = device->allocate(65536 * sizeof(float));
  ASSERT_TRUE(f16.ok() && bf16.ok() && fromF16.ok() && fromBf16.ok());
  DevicePointer addresses[] = {f16->address(), bf16->address(), fromF16->address(),
                               fromBf16->address()};
  void *arguments[] = {&addresses[0], &addresses[1], &addresses[2], &addresses[3], &n};
  runtime::LaunchShape shape;
  shape.grid[0] = 264;
  shape.block[0] = 256;
  ASSERT_TRUE(module->launch("half_conversions_all", shape, arguments).ok());
  ASSERT_TRUE(device->synchronize().ok());
  std::vector<unsigned short> gotF16(n), gotBf16(n);
  std::vector<float> gotFromF16(65536), gotFromBf16(65536);
  ASSERT_TRUE(f16->copyToHost(gotF16.data(), static_cast<std::size_t>(n) * 2).ok());
  ASSERT_TRUE(bf16->copyToHost(gotBf16.data(), static_cast<std::size_t>(n) * 2).ok());
  ASSERT_TRUE(fromF16->copyToHost(gotFromF16.data(), 65536 * sizeof(float)).ok());
  ASSERT_TRUE(fromBf16->copyToHost(gotFromBf16.data(), 65536 * sizeof(float)).ok());
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

TEST(PhiloxOnDevice, LaunchErrorsNameTheKernel) {
  StatusOr<Device> device = Device::open(0);
  if (!device.ok()) {
    ASSERT_FALSE(gpuRequired()) << device.status();
    GTEST_SKIP() << device.status();
  }
  Module empty;
  Status status = empty.launch("philox_fill", runtime::LaunchShape{}, nullptr);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("philox_fill"), std::string::npos);
  StatusOr<Module> garbage = device->load("not a cubin");
  EXPECT_FALSE(garbage.ok());
}

TEST(PhiloxOnDevice, AMissingDeviceIsNamed) {
  StatusOr<Device> device = Device::open(1000);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(std::string(device.status().message()).find("no CUDA device"), std::string::npos)
      << device.status();
}

} // namespace
} // namespace sinter::cuda
