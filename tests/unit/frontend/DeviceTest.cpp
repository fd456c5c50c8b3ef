//===- DeviceTest.cpp - devices -------------------------------------------===//
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/Environment.h"
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
  EXPECT_EQ(Device::parse("cuda:2").id(), (runtime::DeviceId{runtime::DeviceKind::Cuda, 2}));
  for (const char *bad : {"gpu", "cuda:", "cuda:-1", "cuda:+1", "cuda:1x", " cuda", "cuda:0x1",
                          "cuda:99999999999", "CPU", ""}) {
    try {
      Device::parse(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const Error &error) {
      EXPECT_THAT(error.message(), HasSubstr("unknown device '" + std::string(bad) + "'"));
    }
  }
}

// SINTER_DEVICE takes exactly the texts Device::parse takes (Note [One
// device identity] in sinter/runtime/Device.h): one that the environment
// accepted and the frontend then refused would stop every program.
TEST(Device, TheEnvironmentTakesWhatParseTakes) {
  for (const char *text : {"cpu", "cuda", "cuda:0", "cuda:7", "cuda:2147483647", "cuda:2147483648",
                           "cuda:", "cuda:-1", "cuda:+1", "cuda:1 ", "gpu", "Cuda"}) {
    runtime::Environment env = runtime::parseEnvironment([&](const char *name) -> const char * {
      return std::string(name) == "SINTER_DEVICE" ? text : nullptr;
    });
    bool parsed = true;
    try {
      EXPECT_EQ(Device::parse(text).toString(), runtime::DeviceId::parse(text)->name()) << text;
    } catch (const Error &) {
      parsed = false;
    }
    EXPECT_EQ(env.device.empty(), !parsed) << text;
    EXPECT_EQ(env.warnings.size(), parsed ? 0u : 1u) << text;
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
