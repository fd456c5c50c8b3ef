//===- DTypeTest.cpp - element types --------------------------------------===//
#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sinter {
namespace {

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(name(DType::f32), "f32");
  EXPECT_EQ(name(DType::bf16), "bf16");
  EXPECT_EQ(name(DType::boolean), "bool");
  EXPECT_EQ(elementSize(DType::f32), 4u);
  EXPECT_EQ(elementSize(DType::f16), 2u);
  EXPECT_EQ(elementSize(DType::bf16), 2u);
  EXPECT_EQ(elementSize(DType::i32), 4u);
  EXPECT_EQ(elementSize(DType::i64), 8u);
  EXPECT_EQ(elementSize(DType::boolean), 1u);
  EXPECT_TRUE(isFloatingPoint(DType::bf16));
  EXPECT_FALSE(isFloatingPoint(DType::i64));
}

TEST(DType, ParsesOwnAndPyTorchSpellings) {
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64, DType::boolean})
    EXPECT_EQ(parseDType(name(dtype)), dtype) << name(dtype);
  EXPECT_EQ(parseDType("float32"), DType::f32);
  EXPECT_EQ(parseDType("half"), DType::f16);
  EXPECT_EQ(parseDType("bfloat16"), DType::bf16);
  EXPECT_EQ(parseDType("long"), DType::i64);
  EXPECT_EQ(parseDType("i1"), DType::boolean);
  EXPECT_EQ(parseDType("float64"), std::nullopt);
  EXPECT_EQ(parseDType(""), std::nullopt);
}

TEST(DType, BadNameThrowsAtCallersLine) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    dtypeFromString("f8");
    FAIL() << "expected sinter::Error";
  } catch (const Error &error) {
    EXPECT_EQ(error.where().line(), static_cast<unsigned>(line));
    EXPECT_THAT(error.what(), ::testing::HasSubstr("DTypeTest.cpp:" + std::to_string(line)));
    EXPECT_THAT(error.message(), ::testing::HasSubstr("unknown dtype 'f8'"));
  }
}

} // namespace
} // namespace sinter
