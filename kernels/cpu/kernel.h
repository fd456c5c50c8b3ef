//===- kernel.h - what every generated CPU kernel library includes --------===//
//
// The compiler's CPU renderer (compiler/lib/Renderers/CpuRenderer.cpp) writes
// one C++ translation unit per program, which starts by including this
// header: the libraries the kernels call and the helpers they use. Plain
// C++17 for the host compiler (with -fopenmp), unlike common/, which NVRTC
// also compiles. Its text is part of the kernel cache's key.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_KERNEL_H
#define SINTER_KERNELS_CPU_KERNEL_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

// glibc's vector math (libmvec): loops calling these vectorise.
extern "C" {
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
float logf(float);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
float erff(float);
#pragma omp declare simd notinbranch
float sinf(float);
#pragma omp declare simd notinbranch
float cosf(float);
#pragma omp declare simd notinbranch
float powf(float, float);
}

// A float's integer value modulo 2^64 (NaN and infinities: 0), as the
// reference executor converts; a plain cast would be undefined.
static inline uint64_t sinter_wrap(double x) {
  if (!std::isfinite(x))
    return 0;
  const double two63 = 9223372036854775808.0, two64 = 2 * two63;
  if (x > -two63 && x < two63)
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  double t = std::fmod(std::trunc(x), two64);
  if (t < 0)
    t += two64;
  return t >= two64 ? 0 : static_cast<uint64_t>(t);
}

// Both arms computed, then one taken: a select the compiler vectorises
// (`p ? f(i) : 0` kept a branch and a scalar loop per element when f
// loads). The arms are pure, their loads in bounds, and no integer
// division traps.
template <typename T> static inline T sinter_select(bool p, T a, T b) { return p ? a : b; }

// exp(x), the same value as std::exp. libmvec's vector expf takes a scalar
// call per lane for inputs below about -87 (a masked softmax's -inf):
// below -104, where expf is +0, the lane computes exp(+0) and masks it to
// +0 with bit operations, which the compiler cannot fold away.
static inline float sinter_exp(float x) {
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
}

// Matrix products (from the Program's descriptors, and inside kernels), and
// the ops fusion leaves alone (CpuLibrary.cpp renders calls to them).
#include "cpu/argmax.h"
#include "cpu/concat.h"
#include "cpu/conv2d.h"
#include "cpu/gather.h"
#include "cpu/gemm.h"
#include "cpu/pool2d.h"
#include "cpu/sgemm.h"

#endif // SINTER_KERNELS_CPU_KERNEL_H
