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

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

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
  const char *expect = std::getenv("SINTER_EXPECT_CUDA");
  if (expect != nullptr && std::string(expect) == "1") {
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

} // namespace
} // namespace sinter::cuda
