//===- half.h - f16 and bf16 in memory, f32 in arithmetic -----------------===//
//
// Note [Half precision in kernels]
// A tensor of f16 or bf16 is two bytes an element in memory; kernels compute
// in f32. `sinter_f16` and `sinter_bf16` are the two-byte storage types the
// renderers give such buffers and values: reading one gives a float, and
// making one from a float rounds it to nearest, ties to even, so every
// value a kernel defines with a half dtype is rounded once, where the op
// that made it would round it in eager PyTorch and in the reference
// executor (Note [Reference precision]); arithmetic, reductions'
// accumulators and shuffles use float. The conversions are integer bit
// operations, the same text on the host and the device (no intrinsics, no
// dependence on flush-to-zero or the rounding mode): a conversion gives the
// same bits on the CPU, the CUDA simulator and the GPU (the f32 arithmetic
// between conversions may differ in its last bits between the host's libm
// and CUDA's, and where a compiler contracts a multiply and an add). NaN
// stays NaN (quiet); overflow gives infinity; f16's subnormals are kept.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_COMMON_HALF_H
#define SINTER_KERNELS_COMMON_HALF_H

#include "common/host_device.h"

#if !SINTER_ON_DEVICE
#include <cstring>
#endif

SINTER_HOST_DEVICE static inline unsigned sinter_float_bits(float x) {
#if SINTER_ON_DEVICE
  return __float_as_uint(x);
#else
  unsigned bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

SINTER_HOST_DEVICE static inline float sinter_bits_float(unsigned bits) {
#if SINTER_ON_DEVICE
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

/// `x` rounded to bf16 (nearest, ties to even), as bf16's bits.
SINTER_HOST_DEVICE static inline unsigned short sinter_bf16_bits(float x) {
  unsigned bits = sinter_float_bits(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: quiet, its sign kept
    return static_cast<unsigned short>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<unsigned short>(bits >> 16);
}

SINTER_HOST_DEVICE static inline float sinter_bf16_float(unsigned short bits) {
  return sinter_bits_float(static_cast<unsigned>(bits) << 16);
}

/// `x` rounded to f16 (nearest, ties to even), as f16's bits.
SINTER_HOST_DEVICE static inline unsigned short sinter_f16_bits(float x) {
  const unsigned bits = sinter_float_bits(x);
  const unsigned sign = (bits >> 16) & 0x8000u, magnitude = bits & 0x7fffffffu;
  unsigned h;
  if (magnitude > 0x7f800000u) // NaN: quiet, the top of its payload kept
    h = 0x7e00u | ((magnitude >> 13) & 0x3ffu);
  else if (magnitude >= 0x477ff000u) // 65520 and above round to infinity
    h = 0x7c00u;
  else if (magnitude >= 0x38800000u) // a normal f16 (2^-14 and above)
    h = (magnitude - 0x38000000u + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
  else if (magnitude <= 0x33000000u) // 2^-25 and below round to zero
    h = 0;
  else { // a subnormal f16: units of 2^-24
    const unsigned exponent = magnitude >> 23, shift = 126 - exponent; // 14..24
    const unsigned mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const unsigned rest = mantissa & ((1u << shift) - 1u), half = 1u << (shift - 1);
    h = mantissa >> shift;
    h += (rest > half || (rest == half && (h & 1u))) ? 1u : 0u;
  }
  return static_cast<unsigned short>(sign | h);
}

SINTER_HOST_DEVICE static inline float sinter_f16_float(unsigned short h) {
  const unsigned sign = static_cast<unsigned>(h & 0x8000u) << 16;
  const unsigned exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) // infinity or NaN
    return sinter_bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // zero or a subnormal: mantissa x 2^-24, exact in f32
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sinter_bits_float(sign | sinter_float_bits(magnitude));
  }
  return sinter_bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// An f16 in memory: a float when read, rounded when made.
struct sinter_f16 {
  unsigned short bits;
  sinter_f16() = default;
  SINTER_HOST_DEVICE sinter_f16(float x) : bits(sinter_f16_bits(x)) {}
  SINTER_HOST_DEVICE operator float() const { return sinter_f16_float(bits); }
};

/// A bf16 in memory: a float when read, rounded when made.
struct sinter_bf16 {
  unsigned short bits;
  sinter_bf16() = default;
  SINTER_HOST_DEVICE sinter_bf16(float x) : bits(sinter_bf16_bits(x)) {}
  SINTER_HOST_DEVICE operator float() const { return sinter_bf16_float(bits); }
};

#endif // SINTER_KERNELS_COMMON_HALF_H
