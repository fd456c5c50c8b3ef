//===- philox.h - counter-based random numbers (Philox 4x32-10) -----------===//
//
// Why counter-based: element i of a random tensor is a pure function of
// (seed, stream, i), so the same seed gives the same numbers on the CPU
// reference, the generated CPU kernels and the CUDA kernels, in any order and
// under any fusion, and a dropout mask recomputed in the backward pass equals
// the forward one. This header is plain C++ that NVRTC also compiles; the
// functions are __host__ __device__ under CUDA.
//
// The generator is Philox 4x32 with 10 rounds (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011), the one cuRAND and PyTorch
// use. Sinter's mapping: counter = {i_lo, i_hi, stream_lo, stream_hi},
// key = {seed_lo, seed_hi}; word 0 gives a uniform number, words 0 and 1 a
// normal one (Box-Muller).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_COMMON_PHILOX_H
#define SINTER_KERNELS_COMMON_PHILOX_H

#include "common/host_device.h"

#if !SINTER_ON_DEVICE
#include <cmath>
#endif

namespace sinter::kernels {

// Fixed-width words without <cstdint>, which NVRTC does not provide.
using u32 = unsigned int;
using u64 = unsigned long long;
static_assert(sizeof(u32) == 4 && sizeof(u64) == 8, "Philox needs 32- and 64-bit words");

struct Philox4x32 {
  u32 v[4];
};

SINTER_HOST_DEVICE inline void philoxMulhilo(u32 a, u32 b, u32 &hi, u32 &lo) {
  u64 product = static_cast<u64>(a) * b;
  hi = static_cast<u32>(product >> 32);
  lo = static_cast<u32>(product);
}

/// Philox 4x32-10 of `counter` under `key`.
SINTER_HOST_DEVICE inline Philox4x32 philox4x32_10(Philox4x32 counter, u32 key0, u32 key1) {
  constexpr u32 kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr u32 kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    u32 hi0, lo0, hi1, lo1;
    philoxMulhilo(kMul0, counter.v[0], hi0, lo0);
    philoxMulhilo(kMul1, counter.v[2], hi1, lo1);
    counter = {{hi1 ^ counter.v[1] ^ key0, lo1, hi0 ^ counter.v[3] ^ key1, lo0}};
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return counter;
}

/// The four random words of element `index` of stream `stream` under `seed`.
SINTER_HOST_DEVICE inline Philox4x32 philoxWords(u64 seed, u64 stream, u64 index) {
  Philox4x32 counter = {{static_cast<u32>(index), static_cast<u32>(index >> 32),
                         static_cast<u32>(stream), static_cast<u32>(stream >> 32)}};
  return philox4x32_10(counter, static_cast<u32>(seed), static_cast<u32>(seed >> 32));
}

/// The Philox key of random stream `stream` under `seed` (a SplitMix64 mix,
/// 52 bits so that it is exact in a double): what a random op of the lazy
/// graph reads at run time, so that a compiled step with dropout is the same
/// program every step while its masks differ.
SINTER_HOST_DEVICE inline u64 randomKey(u64 seed, u64 stream) {
  u64 z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) & ((1ull << 52) - 1);
}

/// A uniform number in [0, 1) with 24 random bits (exact in f32).
SINTER_HOST_DEVICE inline float philoxUniform(u64 seed, u64 stream, u64 index) {
  return static_cast<float>(philoxWords(seed, stream, index).v[0] >> 8) * (1.0f / 16777216.0f);
}

/// A standard normal number (Box-Muller on words 0 and 1).
SINTER_HOST_DEVICE inline float philoxNormal(u64 seed, u64 stream, u64 index) {
  Philox4x32 words = philoxWords(seed, stream, index);
  float u1 = static_cast<float>((words.v[0] >> 8) + 1) * (1.0f / 16777216.0f); // (0, 1]
  float u2 = static_cast<float>(words.v[1] >> 8) * (1.0f / 16777216.0f);       // [0, 1)
  return sqrtf(-2.0f * logf(u1)) * cosf(6.283185307179586f * u2);
}

} // namespace sinter::kernels

#endif // SINTER_KERNELS_COMMON_PHILOX_H
