//===- HalfTest.cpp - f16 and bf16 conversions against independent ones ---===//
//
// kernels/common/half.h's conversions, which every target's kernels use
// (Note [Half precision in kernels]), against GCC's _Float16 (f16) and a
// rounding computed in double (bf16): every f16 and bf16 bit pattern read,
// and a sweep of f32 bit patterns (every 4099th, which passes through every
// exponent, plus the ties and edges named below) rounded.
//
//===----------------------------------------------------------------------===//
#include "common/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

/// The f32 values the sweep rounds: a stride through every bit pattern, and
/// the halfway points and edges of both half types.
std::vector<float> sweep() {
  std::vector<float> values;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099)
    values.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float edge : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 6.103515625e-05f /* 2^-14 */,
                     5.9604644775390625e-08f /* 2^-24 */, 2.98023223876953125e-08f /* 2^-25 */,
                     2.9802326e-08f, 1.0f + 0x1p-11f, 1.0f + 0x1p-11f + 0x1p-23f,
                     1.0f + 0x1p-10f + 0x1p-11f, 1.0f + 0x1p-8f, 1.0f + 0x1p-7f + 0x1p-8f,
                     3.3895314e38f /* bf16's largest */, 3.4028235e38f, INFINITY, 0.0f})
    for (float sign : {1.0f, -1.0f})
      values.push_back(sign * edge);
  // Every f16 halfway point between neighbours (ties to even).
  for (uint32_t h = 0; h < 0x7c00u; ++h) {
    double low = static_cast<double>(std::bit_cast<_Float16>(static_cast<uint16_t>(h)));
    double high = static_cast<double>(std::bit_cast<_Float16>(static_cast<uint16_t>(h + 1)));
    values.push_back(static_cast<float>((low + high) / 2));
  }
  return values;
}

/// `x` rounded to bf16 in double arithmetic: bf16 has f32's exponents
/// (normals down to 2^-126, subnormals in units of 2^-133) and 8 bits.
double bf16Rounded(float x) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  double magnitude = std::fabs(static_cast<double>(x));
  int exponent = std::max(std::ilogb(magnitude), -126);
  double unit = std::ldexp(1.0, exponent - 7);
  double rounded = std::nearbyint(magnitude / unit) * unit; // ties to even
  if (rounded >= std::ldexp(1.0, 128))
    rounded = INFINITY;
  return std::copysign(rounded, static_cast<double>(x));
}

TEST(Half, EveryF16ReadsAsGccsFloat16AndRoundsBackToItself) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    auto bits = static_cast<uint16_t>(h);
    float expected = static_cast<float>(std::bit_cast<_Float16>(bits));
    float got = sinter_f16_float(bits);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      EXPECT_TRUE(std::isnan(sinter_f16_float(sinter_f16_bits(got)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected)) << std::hex << h;
    ASSERT_EQ(sinter_f16_bits(got), bits) << std::hex << h;
  }
}

TEST(Half, F32RoundsToF16AsGccsFloat16Does) {
  int64_t checked = 0;
  for (float x : sweep()) {
    uint16_t expected = std::bit_cast<uint16_t>(static_cast<_Float16>(x));
    uint16_t got = sinter_f16_bits(x);
    if (std::isnan(x)) {
      ASSERT_EQ(got & 0x7c00u, 0x7c00u) << x;
      ASSERT_NE(got & 0x3ffu, 0u) << "NaN became infinity: " << std::bit_cast<uint32_t>(x);
      ASSERT_NE(got & 0x200u, 0u) << "a signalling NaN: " << std::bit_cast<uint32_t>(x);
      continue;
    }
    ASSERT_EQ(got, expected) << std::hexfloat << x << " (bits " << std::hex
                             << std::bit_cast<uint32_t>(x) << ")";
    ++checked;
  }
  EXPECT_GT(checked, 1000000);
}

TEST(Half, EveryBf16ReadsAsTheTopOfAnF32AndRoundsBackToItself) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    auto bits = static_cast<uint16_t>(h);
    float got = sinter_bf16_float(bits);
    ASSERT_EQ(std::bit_cast<uint32_t>(got), h << 16) << std::hex << h;
    if (std::isnan(got))
      EXPECT_TRUE(std::isnan(sinter_bf16_float(sinter_bf16_bits(got)))) << std::hex << h;
    else
      ASSERT_EQ(sinter_bf16_bits(got), bits) << std::hex << h;
  }
}

TEST(Half, F32RoundsToBf16ToNearestTiesToEven) {
  int64_t checked = 0;
  for (float x : sweep()) {
    float got = sinter_bf16_float(sinter_bf16_bits(x));
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(got)) << std::bit_cast<uint32_t>(x);
      ASSERT_NE(sinter_bf16_bits(x) & 0x40u, 0u) << "a signalling NaN";
      continue;
    }
    double expected = bf16Rounded(x);
    ASSERT_EQ(std::bit_cast<uint64_t>(static_cast<double>(got)), std::bit_cast<uint64_t>(expected))
        << std::hexfloat << x;
    ++checked;
  }
  EXPECT_GT(checked, 1000000);
}

TEST(Half, StorageTypesRoundWhenMadeAndReadAsFloats) {
  // bf16 stores 7 bits of mantissa: 1 + 2^-8 is halfway between 1 and
  // 1 + 2^-7, and the tie goes to the even one, 1.
  sinter_bf16 tie = 1.0f + 0x1p-8f;
  EXPECT_EQ(static_cast<float>(tie), 1.0f);
  sinter_bf16 up = 1.0f + 0x1p-8f + 0x1p-20f;
  EXPECT_EQ(static_cast<float>(up), 1.0f + 0x1p-7f);
  sinter_f16 big = 70000.0f;
  EXPECT_EQ(static_cast<float>(big), INFINITY);
  sinter_f16 a = 3.0f, b = 0.1f;
  // Arithmetic is in float: the product of the stored values, unrounded.
  float product = a * b;
  EXPECT_EQ(product, 3.0f * sinter_f16_float(sinter_f16_bits(0.1f)));
  static_assert(sizeof(sinter_f16) == 2 && sizeof(sinter_bf16) == 2);
}

} // namespace
