//===- DriverDeviceTest.cpp - a GPU as a CUDA device, through the driver --===//
//
// The driver's device (Note [The driver's device] in
// runtime/lib/DriverDevice.cpp) against what the host computes: copies,
// fills of every element size, the cache of device memory (a BlockCache),
// matrix products through cuBLAS (every transpose, a batch with a shared
// operand, the bias epilogue) against plain loops in double, and a Program
// of a kernel compiled by NVRTC, a fill and a product run by CudaExecutable.
// Needs no MLIR, so it runs where only the runtime is (tools/gpu_check.sh).
// Without a GPU every test but the first skips, unless SINTER_EXPECT_CUDA=1
// demands one.
//
//===----------------------------------------------------------------------===//
#include "common/GemmReference.h"
#include "common/GpuRequired.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace sinter::runtime {
namespace {

using test_support::gpuRequired;

/// The first GPU as a device, or null after GTEST_SKIP (no GPU) or a failure
/// (none where one is required).
CudaDevice *gpuOrSkip() {
  StatusOr<CudaDevice *> device = driverCudaDevice(0);
  if (!device.ok()) {
    EXPECT_FALSE(gpuRequired()) << device.status();
    return nullptr;
  }
  return *device;
}

/// The first GPU's compute capability as NVRTC takes it ("90").
std::string archOf() {
  StatusOr<std::vector<cuda::DeviceInfo>> infos = cuda::listDevices();
  return infos.ok() ? std::to_string((*infos)[0].computeCapabilityMajor * 10 +
                                     (*infos)[0].computeCapabilityMinor)
                    : "";
}

#define SINTER_GPU_OR_SKIP(device)                                                                 \
  CudaDevice *device = gpuOrSkip();                                                                \
  if (device == nullptr)                                                                           \
  GTEST_SKIP() << "no GPU: " << driverCudaDevice(0).status()

TEST(DriverDevice, WithoutAGpuSaysWhatIsMissing) {
  if (cuda::deviceCount() > 0)
    GTEST_SKIP() << "this machine has a GPU";
  ASSERT_FALSE(gpuRequired()) << "SINTER_EXPECT_CUDA=1 but the driver reports no GPU";
  StatusOr<CudaDevice *> device = driverCudaDevice(0);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(std::string(device.status().message()).find("no CUDA device"), std::string::npos)
      << device.status();
}

TEST(DriverDeviceOnGpu, CopiesFillsAndReusesMemory) {
  SINTER_GPU_OR_SKIP(device);
  EXPECT_EQ(device->device().name(), "cuda:0");
  constexpr int64_t kBytes = 1000;
  StatusOr<void *> a = device->allocate(kBytes), b = device->allocate(kBytes);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*a) % 256, 0u);
  std::vector<uint8_t> in(kBytes), out(kBytes, 0);
  for (int64_t i = 0; i < kBytes; ++i)
    in[i] = static_cast<uint8_t>(i * 7 + 3);
  ASSERT_TRUE(device->copyToDevice(*a, in.data(), kBytes).ok());
  ASSERT_TRUE(device->copyOnDevice(*b, *a, kBytes).ok());
  ASSERT_TRUE(device->copyToHost(out.data(), *b, kBytes).ok());
  EXPECT_EQ(in, out);
  // Fills of 1, 2, 4 and 8-byte elements, every byte checked.
  for (size_t size : {1, 2, 4, 8}) {
    std::vector<uint8_t> element(size);
    for (size_t j = 0; j < size; ++j)
      element[j] = static_cast<uint8_t>(0x11 * (j + 1) + size);
    ASSERT_TRUE(device->fill(*a, 800, element).ok()) << size;
    ASSERT_TRUE(device->synchronize().ok());
    ASSERT_TRUE(device->copyToHost(out.data(), *a, 800).ok());
    for (int64_t i = 0; i < 800; ++i)
      ASSERT_EQ(out[i], element[i % size]) << "byte " << i << " of a fill of " << size;
  }
  EXPECT_FALSE(device->fill(*a, 800, std::vector<uint8_t>(3)).ok());
  // A block given back serves the next request of its size: freed, it
  // merges back into the free block it was cut from, so the cache is as it
  // was before, whatever other tests left in it.
  device->deallocate(*b);
  StatusOr<void *> c = device->allocate(kBytes);
  ASSERT_TRUE(c.ok());
  device->deallocate(*c);
  StatusOr<void *> again = device->allocate(kBytes);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *c);
  device->deallocate(*a);
  device->deallocate(*again);
}

/// `values` floats in device memory, given back at the end of the test.
struct DeviceFloats {
  CudaDevice &device;
  void *memory = nullptr;
  DeviceFloats(CudaDevice &d, const std::vector<float> &values) : device(d) {
    memory = *device.allocate(static_cast<int64_t>(values.size() * 4));
    EXPECT_TRUE(device.copyToDevice(memory, values.data(), values.size() * 4).ok());
  }
  ~DeviceFloats() { device.deallocate(memory); }
  float *data() const { return static_cast<float *>(memory); }
};

/// A Program of one kernel `k0` (out = in + 1, over `elements` floats, from
/// `cubin`), a fill of `bias` and a product of out with itself plus bias.
Program programOf(const std::string &cubin, int64_t elements) {
  Program program;
  program.buffers = {{elements * 4}, {elements * 4, 0}, {16, 1024 * 64}, {64, 1024 * 65}};
  program.arguments = {0};
  program.results = {1, 3};
  program.donors = {-1, -1};
  program.arenaBytes = 1024 * 66;
  program.library = cubin;
  program.kernelPrefix = "k";
  Program::Step kernel;
  kernel.kernel = 0;
  kernel.inputs = {0};
  kernel.outputs = {1};
  kernel.results = 1;
  kernel.label = "add_one <- model.cpp:12";
  kernel.shape = {.grid = {(elements + 127) / 128, 1, 1}, .block = {128, 1, 1}};
  Program::Step fill;
  fill.kind = Program::Step::Kind::Fill;
  fill.outputs = {2};
  fill.results = 1;
  float half = 0.5f;
  fill.element.resize(4);
  std::memcpy(fill.element.data(), &half, 4);
  // [4 x 4] = out[0:16] viewed as 4 x 4, times itself, plus the bias.
  Program::Step product;
  product.kind = Program::Step::Kind::Gemm;
  product.inputs = {1, 1, 2};
  product.outputs = {3};
  product.results = 1;
  product.gemm = gemmOfRowMajor(false, false, 4, 4, 4, 1, false);
  product.gemm.epilogue = Gemm::Epilogue::Bias;
  product.label = "matmul <- model.cpp:13";
  program.steps = {kernel, fill, product};
  program.signature.arguments = {{.name = "x", .shape = {elements}}};
  program.signature.results = {{.name = "y", .role = Program::Role::Output, .shape = {elements}},
                               {.name = "z", .role = Program::Role::Output, .shape = {4, 4}}};
  return program;
}

TEST(DriverDeviceOnGpu, MatrixProductsEqualTheHostsInEveryLayout) {
  SINTER_GPU_OR_SKIP(device);
  std::mt19937 random(5);
  std::uniform_real_distribution<float> uniform(-1, 1);
  auto values = [&](int64_t n) {
    std::vector<float> v(n);
    for (float &x : v)
      x = uniform(random);
    return v;
  };
  // The layouts a step's products take: every transpose, a batch sharing
  // its right operand, and the bias epilogue.
  std::vector<Gemm> products = {gemmOfRowMajor(false, false, 33, 17, 65, 1, false),
                                gemmOfRowMajor(true, false, 33, 17, 65, 1, false),
                                gemmOfRowMajor(false, true, 33, 17, 65, 1, false),
                                gemmOfRowMajor(false, false, 5, 7, 9, 3, true),
                                gemmOfRowMajor(false, true, 64, 48, 32, 1, false)};
  products.back().epilogue = Gemm::Epilogue::Bias;
  products[1].beta = 1;
  // A module's products need no kernel of it: an empty cubin serves.
  EXPECT_FALSE(device->load("/nonexistent.cubin").ok());
  StatusOr<std::string> image =
      cuda::compileWithNvrtc({.path = "empty.cu",
                              .source = "extern \"C\" __global__ void k0() {}\n",
                              .arch = archOf(),
                              .output = cuda::NvrtcOutput::Cubin});
  ASSERT_TRUE(image.ok()) << image.status();
  std::string path = ::testing::TempDir() + "/empty.cubin";
  std::ofstream(path, std::ios::binary) << *image;
  StatusOr<std::unique_ptr<CudaModule>> module = device->load(path);
  ASSERT_TRUE(module.ok()) << module.status();
  for (const Gemm &g : products) {
    std::vector<float> a = values(g.strideA ? g.strideA * g.batch : g.lda * (g.transa ? g.m : g.k));
    std::vector<float> b = values(g.strideB ? g.strideB * g.batch : g.ldb * (g.transb ? g.k : g.n));
    std::vector<float> c = values(std::max<int64_t>(g.strideC, g.ldc * g.n) * g.batch);
    std::vector<float> bias = values(g.m);
    std::vector<float> want = test_support::gemmReference(g, a, b, c, bias);
    DeviceFloats da(*device, a), db(*device, b), dc(*device, c), dbias(*device, bias);
    std::vector<float> got(c.size());
    Status status = (*module)->gemm(g, da.data(), db.data(), dc.data(), dbias.data());
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_TRUE(device->synchronize().ok());
    ASSERT_TRUE(device->copyToHost(got.data(), dc.data(), c.size() * 4).ok());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << describe(g) << " at " << i;
  }
}

TEST(DriverDeviceOnGpu, RunsAProgramOfAKernelAFillAndAProduct) {
  SINTER_GPU_OR_SKIP(device);
  constexpr int64_t kElements = 1000;
  StatusOr<std::string> image = cuda::compileWithNvrtc(
      {.path = "add_one.cu",
       .source = "extern \"C\" __global__ void k0(const float *in, float *out) {\n"
                 "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  if (i < 1000) out[i] = in[i] + 1.0f;\n}\n",
       .arch = archOf(),
       .output = cuda::NvrtcOutput::Cubin});
  ASSERT_TRUE(image.ok()) << image.status();
  std::string path = ::testing::TempDir() + "/add_one.cubin";
  std::ofstream(path, std::ios::binary) << *image;
  auto executable = CudaExecutable::load(programOf(path, kElements), *device);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<float> x(kElements), y(kElements, -1), z(16, -1);
  for (int64_t i = 0; i < kElements; ++i)
    x[i] = static_cast<float>(i % 13) * 0.25f;
  for (int run = 0; run < 2; ++run) { // the second from the cached memory
    Status status = (*executable)->run({x.data()}, {y.data(), z.data()});
    ASSERT_TRUE(status.ok()) << status;
    for (int64_t i = 0; i < kElements; ++i)
      ASSERT_EQ(y[i], x[i] + 1.0f) << "element " << i;
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) {
        double want = 0.5;
        for (int p = 0; p < 4; ++p)
          want += double(y[r * 4 + p]) * y[p * 4 + c];
        EXPECT_NEAR(z[r * 4 + c], want, 1e-5 * std::fabs(want)) << r << "," << c;
      }
  }
}

} // namespace
} // namespace sinter::runtime
