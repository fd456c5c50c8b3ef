//===- StatusTest.cpp - the runtime's error values ------------------------===//
#include "sinter/runtime/Status.h"

#include <gtest/gtest.h>

#include <string>

namespace sinter {
namespace {

TEST(Status, WithLocationPrefixesFileAndLine) {
  Status status =
      withLocation(absl::InvalidArgumentError("bad shape"), "/src/sinter/runtime/lib/X.cpp", 42);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()), "runtime/lib/X.cpp:42: bad shape");
}

TEST(Status, WithLocationKeepsOk) { EXPECT_TRUE(withLocation(absl::OkStatus(), "f.cpp", 1).ok()); }

Status failIfNegative(int value) {
  if (value < 0)
    return absl::OutOfRangeError("negative");
  return absl::OkStatus();
}

StatusOr<int> twice(int value) {
  SINTER_RETURN_IF_ERROR(failIfNegative(value));
  return 2 * value;
}

StatusOr<int> twiceTwice(int value) {
  SINTER_ASSIGN_OR_RETURN(int once, twice(value));
  SINTER_ASSIGN_OR_RETURN(int again, twice(once));
  return again;
}

TEST(Status, MacrosPropagateErrorsAndValues) {
  ASSERT_TRUE(twiceTwice(3).ok());
  EXPECT_EQ(*twiceTwice(3), 12);
  StatusOr<int> failed = twiceTwice(-1);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(std::string(failed.status().message()), "negative");
}

} // namespace
} // namespace sinter
