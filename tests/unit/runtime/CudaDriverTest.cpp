//===- CudaDriverTest.cpp - the lazily loaded CUDA driver -----------------===//
//
// Which suite runs depends on the process environment (the driver is opened
// once per process): tests/unit/CMakeLists.txt runs CudaDriverMissing and
// CudaDriverStub with SINTER_CUDA_DRIVER pointing at a missing library and at
// the toolkit's stub; CudaDriverDefault runs with the real driver, if any, and
// checks a GPU when SINTER_EXPECT_CUDA=1 (tools/gpu_check.sh sets it).
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/CudaDriver.h"

#include "common/GpuRequired.h"
#include "sinter/runtime/Artifact.h"
#include "sinter/runtime/LaunchShape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace sinter::cuda {
namespace {

using ::testing::HasSubstr;

bool driverOverridden() { return std::getenv("SINTER_CUDA_DRIVER") != nullptr; }

TEST(CudaDriverMissing, SaysWhichLibraryIsMissing) {
  if (!driverOverridden())
    GTEST_SKIP() << "run by ctest with SINTER_CUDA_DRIVER set";
  StatusOr<std::vector<DeviceInfo>> devices = listDevices();
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), absl::StatusCode::kUnavailable);
  std::string message(devices.status().message());
  EXPECT_THAT(message, HasSubstr("no CUDA device"));
  EXPECT_THAT(message, HasSubstr(std::getenv("SINTER_CUDA_DRIVER")));
  EXPECT_EQ(deviceCount(), 0);
  EXPECT_FALSE(driverVersion().ok());
}

TEST(CudaDriverStub, RecognisesTheToolkitStub) {
  if (!driverOverridden())
    GTEST_SKIP() << "run by ctest with SINTER_CUDA_DRIVER set";
  StatusOr<std::vector<DeviceInfo>> devices = listDevices();
  ASSERT_FALSE(devices.ok());
  EXPECT_THAT(std::string(devices.status().message()), HasSubstr("stub library"));
  EXPECT_EQ(deviceCount(), 0);
}

TEST(CudaDriverDefault, ReportsDevicesOrWhyNot) {
  if (driverOverridden())
    GTEST_SKIP() << "SINTER_CUDA_DRIVER is set";
  StatusOr<std::vector<DeviceInfo>> devices = listDevices();
  if (test_support::gpuRequired()) {
    ASSERT_TRUE(devices.ok()) << devices.status();
    ASSERT_GT(devices->size(), 0u);
    EXPECT_FALSE(devices->front().name.empty());
    EXPECT_GT(devices->front().totalMemoryBytes, 0u);
    EXPECT_GE(devices->front().computeCapabilityMajor, 5);
    ASSERT_TRUE(driverVersion().ok());
    EXPECT_GE(*driverVersion(), 11000);
    return;
  }
  if (!devices.ok()) {
    EXPECT_THAT(std::string(devices.status().message()), HasSubstr("no CUDA device"));
    EXPECT_EQ(deviceCount(), 0);
  } else {
    EXPECT_EQ(deviceCount(), static_cast<int>(devices->size()));
  }
}

TEST(CudaDriverError, NamesTheCallAndPlace) {
  Status status = driverError(1, "cuMemAlloc(&ptr, 0)", "/x/runtime/lib/Buffer.cpp", 7);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  std::string message(status.message());
  EXPECT_THAT(message, HasSubstr("runtime/lib/Buffer.cpp:7"));
  EXPECT_THAT(message, HasSubstr("cuMemAlloc(&ptr, 0) failed with"));
}

// Every launch (the driver's device, the simulator) checks its shape first
// (runtime::checkCudaLaunchShape): no GPU needed.
TEST(CudaLaunch, AShapeOutsideCudasLimitsIsRefusedNamingTheKernel) {
  auto launch = [&](auto edit) {
    runtime::LaunchShape shape;
    edit(shape);
    return runtime::checkCudaLaunchShape("fusion_3", shape);
  };
  for (Status status :
       {launch([](auto &s) { s.block[0] = 2048; }), launch([](auto &s) { s.grid[1] = 70000; }),
        launch([](auto &s) { s.grid[0] = 0; })}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("launch of 'fusion_3': grid "));
    EXPECT_THAT(std::string(status.message()), HasSubstr("outside CUDA's limits"));
  }
  Status wide = launch([](auto &s) {
    s.block[0] = 64;
    s.block[1] = 32;
  });
  EXPECT_EQ(wide.code(), absl::StatusCode::kInvalidArgument) << wide;
  EXPECT_THAT(std::string(wide.message()), HasSubstr("2048 threads a block"));
  Status inside = launch([](auto &s) {
    s.grid[0] = 264;
    s.block[0] = 256;
    s.sharedBytes = 4096;
  });
  EXPECT_TRUE(inside.ok()) << inside;
}

} // namespace
} // namespace sinter::cuda

namespace sinter::runtime {
namespace {

// Note [CUDA artifacts]: which of an artifact's codes a GPU runs.
TEST(CudaImage, AGpuRunsItsCubinElseABinaryCompatibleOneElsePtx) {
  std::vector<std::string> archs = {"sm_80", "sm_90", "compute_90"};
  EXPECT_EQ(cudaImageFor(archs, 9, 0), "sm_90");
  EXPECT_EQ(cudaImageFor(archs, 8, 0), "sm_80");
  EXPECT_EQ(cudaImageFor(archs, 8, 6), "sm_80");       // same major, a later minor
  EXPECT_EQ(cudaImageFor(archs, 10, 0), "compute_90"); // a newer GPU compiles the PTX
  EXPECT_EQ(cudaImageFor(archs, 7, 5), "");            // older than everything
  EXPECT_EQ(cudaImageFor({"sm_80", "sm_90"}, 10, 0), "");
  EXPECT_EQ(cudaImageFor({"sm_86"}, 8, 0), "");
  EXPECT_EQ(cudaImageFor({"compute_80", "compute_90"}, 8, 9), "compute_80");
  EXPECT_EQ(cudaImageFor({"sm_80", "sm_86", "compute_90"}, 8, 9), "sm_86");
  EXPECT_EQ(cudaArchitectureNumber("sm_90"), 90);
  EXPECT_EQ(cudaArchitectureNumber("compute_100"), 100);
  for (const char *bad : {"sm_9", "sm_90a", "gfx90", "compute_", "sm_1000", "sm_40", ""})
    EXPECT_EQ(cudaArchitectureNumber(bad), 0) << bad;
}

} // namespace
} // namespace sinter::runtime
