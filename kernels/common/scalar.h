//===- scalar.h - the scalar helpers every generated kernel calls ---------===//
//
// One definition for every target (host_device.h): the CPU's kernels include
// it through cpu/kernel.h, the GPU's through their prologue, so a value is
// computed by the same expression on both. On the host the definitions are
// the ones the CPU's kernels were tuned with (memcpy bit casts the
// vectoriser folds); on the device, the intrinsics for the same bits.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_COMMON_SCALAR_H
#define SINTER_KERNELS_COMMON_SCALAR_H

#include "common/host_device.h"
#include "common/half.h"

#if !SINTER_ON_DEVICE
#include <cmath>
#include <cstdint>
#include <cstring>
#define SINTER_U64 uint64_t
#define SINTER_I64 int64_t
#else
#define SINTER_U64 unsigned long long
#define SINTER_I64 long long
#endif

// A float's integer value modulo 2^64 (NaN and infinities: 0), as the
// reference executor converts; a plain cast would be undefined.
SINTER_HOST_DEVICE static inline SINTER_U64 sinter_wrap(double x) {
#if SINTER_ON_DEVICE
  if (!isfinite(x))
    return 0;
  const double two63 = 9223372036854775808.0, two64 = 2 * two63;
  if (x > -two63 && x < two63)
    return static_cast<SINTER_U64>(static_cast<SINTER_I64>(x));
  double t = fmod(trunc(x), two64);
#else
  if (!std::isfinite(x))
    return 0;
  const double two63 = 9223372036854775808.0, two64 = 2 * two63;
  if (x > -two63 && x < two63)
    return static_cast<SINTER_U64>(static_cast<SINTER_I64>(x));
  double t = std::fmod(std::trunc(x), two64);
#endif
  if (t < 0)
    t += two64;
  return t >= two64 ? 0 : static_cast<SINTER_U64>(t);
}

// Both arms computed, then one taken: a select the compiler vectorises
// (`p ? f(i) : 0` kept a branch and a scalar loop per element when f
// loads). The arms are pure, their loads in bounds, and no integer
// division traps.
template <typename T> SINTER_HOST_DEVICE static inline T sinter_select(bool p, T a, T b) {
  return p ? a : b;
}

// exp(x), the same value as std::exp. libmvec's vector expf takes a scalar
// call per lane for inputs below about -87 (a masked softmax's -inf):
// below -104, where expf is +0, the lane computes exp(+0) and masks it to
// +0 with bit operations, which the compiler cannot fold away.
SINTER_HOST_DEVICE static inline float sinter_exp(float x) {
#if SINTER_ON_DEVICE
  const unsigned keep = x < -104.0f ? 0u : ~0u;
  float e = expf(__uint_as_float(__float_as_uint(x) & keep));
  return __uint_as_float(__float_as_uint(e) & keep);
#else
  const uint32_t keep = x < -104.0f ? 0u : ~0u;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= keep;
  float e;
  std::memcpy(&e, &bits, sizeof bits);
  e = std::exp(e);
  std::memcpy(&bits, &e, sizeof bits);
  bits &= keep;
  std::memcpy(&e, &bits, sizeof bits);
  return e;
#endif
}

#undef SINTER_U64
#undef SINTER_I64

#endif // SINTER_KERNELS_COMMON_SCALAR_H
