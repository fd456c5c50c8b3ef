//===- DeviceTest.cpp - devices -------------------------------------------===//
#include "sinter/runtime/CudaDriver.h"
#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sinter {
namespace {

using ::testing::HasSubstr;

TEST(Device, ValuesAndNames) {
  EXPECT_TRUE(Device::cpu().isCpu());
  EXPECT_EQ(Device::cpu().toString(), "cpu");
  EXPECT_EQ(Device::cuda(3).toString(), "cuda:3");
  EXPECT_EQ(Device::cuda(3).index(), 3);
  // Two devices made apart are equal when kind and index are; the index counts.
  Device first = Device::cuda(1), second = Device::cuda(1);
  EXPECT_TRUE(first == second);
  EXPECT_FALSE(first != second);
  EXPECT_NE(Device::cuda(1), Device::cuda(2));
  EXPECT_FALSE(Device::cuda(1) == Device::cuda(2));
  EXPECT_NE(Device::cuda(0), Device::cpu());
  EXPECT_TRUE(Device::cpu().available());
}

TEST(Device, Parse) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:2"), Device::cuda(2));
  for (const char *bad : {"gpu", "cuda:", "cuda:-1", "cuda:1x", "CPU", ""}) {
    try {
      Device::parse(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const Error &error) {
      EXPECT_THAT(error.message(), HasSubstr("unknown device '" + std::string(bad) + "'"));
    }
  }
}

TEST(Device, NegativeIndexThrows) { EXPECT_THROW(Device::cuda(-1), Error); }

TEST(Device, BestAndAvailabilityAgreeWithTheDriver) {
  int count = cuda::deviceCount();
  EXPECT_EQ(Device::best(), count > 0 ? Device::cuda(0) : Device::cpu());
  EXPECT_EQ(Device::cuda(0).available(), count > 0);
  EXPECT_FALSE(Device::cuda(count).available());
}

TEST(Device, MissingGpuIsAClearErrorAtTheCallersLine) {
  int count = cuda::deviceCount();
  Device missing = Device::cuda(count); // one past the last device
  try {
    missing.ensureAvailable();
    FAIL() << "expected sinter::Error";
  } catch (const Error &error) {
    EXPECT_THAT(error.what(), HasSubstr("DeviceTest.cpp:"));
    EXPECT_THAT(error.message(), HasSubstr(missing.toString() + " requested"));
    if (count == 0)
      EXPECT_THAT(error.message(), HasSubstr("no CUDA device"));
    else
      EXPECT_THAT(error.message(), HasSubstr("this machine has " + std::to_string(count)));
  }
  EXPECT_NO_THROW(Device::cpu().ensureAvailable());
}

} // namespace
} // namespace sinter
