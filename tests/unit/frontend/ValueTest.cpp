//===- ValueTest.cpp - the two forms of a computed value ------------------===//
#include "sinter/lazy/Node.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace {

using sinter::DType;
using sinter::lazy::Value;

/// Doubles -> bytes -> doubles gives the same numbers, bit for bit (== would
/// not see a lost sign of -0.0).
void roundTrip(DType dtype, const std::vector<double> &values) {
  Value fromDoubles(values, dtype);
  size_t size = sinter::elementSize(dtype);
  Value::Bytes copy = Value::allocate(static_cast<int64_t>(values.size() * size));
  std::memcpy(copy.get(), fromDoubles.bytes(), values.size() * size);
  Value fromBytes(copy, static_cast<int64_t>(values.size()), dtype);
  const std::vector<double> &back = fromBytes.elements();
  ASSERT_EQ(back.size(), values.size());
  for (size_t k = 0; k < values.size(); ++k) {
    if (std::isnan(values[k])) {
      EXPECT_TRUE(std::isnan(back[k])) << name(dtype) << " element " << k;
      continue;
    }
    uint64_t gotBits, wantBits;
    std::memcpy(&gotBits, &back[k], sizeof gotBits);
    std::memcpy(&wantBits, &values[k], sizeof wantBits);
    EXPECT_EQ(gotBits, wantBits) << name(dtype) << " element " << k << ": " << back[k] << " where "
                                 << values[k] << " went in";
  }
}

TEST(Value, EveryDTypeRoundTripsExactly) {
  double inf = std::numeric_limits<double>::infinity();
  // Values exact in binary32 (as the reference executor keeps them).
  roundTrip(DType::f32, {0.0, -0.0, 1.5, static_cast<float>(-3.25e-30), 3.4028234663852886e38,
                         std::ldexp(1.0, -149), inf, -inf, NAN});
  // Values exact in binary16: normal, subnormal (2^-24), the largest (65504).
  roundTrip(DType::f16,
            {0.0, -0.0, 1.0, -2.5, 65504.0, std::ldexp(1.0, -24), std::ldexp(3.0, -20), -inf, NAN});
  roundTrip(DType::bf16, {0.0, -0.0, 1.0, -1.5, std::ldexp(1.0, 100), -inf, NAN});
  roundTrip(DType::i32, {0, -1, 2147483647.0, -2147483648.0});
  roundTrip(DType::i64, {0, -7, 4503599627370496.0});
  roundTrip(DType::boolean, {0, 1, 1, 0});
}

TEST(Value, BytesAreTheDTypesLayout) {
  Value half({1.0, -2.0}, DType::f16);
  uint16_t bits[2];
  std::memcpy(bits, half.bytes(), 4);
  EXPECT_EQ(bits[0], 0x3c00); // IEEE binary16 1.0
  EXPECT_EQ(bits[1], 0xc000); // -2.0
  Value brain({1.0}, DType::bf16);
  std::memcpy(bits, brain.bytes(), 2);
  EXPECT_EQ(bits[0], 0x3f80);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(half.bytes()) % 64, 0u);
}

} // namespace
