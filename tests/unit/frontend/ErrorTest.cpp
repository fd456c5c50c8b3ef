//===- ErrorTest.cpp - the exception type of the public API ---------------===//
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <string>

namespace sinter {
namespace {

void checkPositive(int value, std::source_location where = std::source_location::current()) {
  SINTER_CHECK(value > 0, where, "expected a positive value, got " + std::to_string(value));
}

TEST(Error, CheckNamesTheCallersLine) {
  EXPECT_NO_THROW(checkPositive(1));
  int line = __LINE__ + 2;
  try {
    checkPositive(-4);
    FAIL() << "expected sinter::Error";
  } catch (const Error &error) {
    std::string expected = std::string(error.where().file_name()) + ":" + std::to_string(line) +
                           ": expected a positive value, got -4";
    EXPECT_EQ(std::string(error.what()), expected);
    EXPECT_EQ(error.message(), "expected a positive value, got -4");
    EXPECT_EQ(error.where().line(), static_cast<unsigned>(line));
  }
}

TEST(Error, IsAStdRuntimeError) {
  EXPECT_THROW(throwError("boom", std::source_location::current()), std::runtime_error);
}

} // namespace
} // namespace sinter
