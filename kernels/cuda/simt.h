//===- simt.h - the SIMT prelude: CUDA C++ compiled by the host compiler --===//
//
// Note [The CUDA simulator] (sinter/runtime/Simt.h): a CUDA source that
// NVRTC compiles for the GPU compiles unchanged with the host compiler
// after this header, and runs through sinter::simt::launch (or
// sinter_simulate below). It defines what such a source uses of CUDA: the
// qualifiers, threadIdx / blockIdx / blockDim / gridDim, __shared__ (per
// block), __syncthreads(), the warp shuffles and votes (a rendezvous of the
// mask's lanes), atomics, and the intrinsics the renderer writes. Anything
// else fails to compile here, which is how a kernel that needs more is
// found before it reaches a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CUDA_SIMT_H
#define SINTER_KERNELS_CUDA_SIMT_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#error "kernels/cuda/simt.h is for the host compiler; NVRTC compiles the source without it"
#endif

#include "sinter/runtime/Simt.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
// One copy per block: the fibers of a block share their worker thread.
#define __shared__ static thread_local

using uint3 = ::sinter::simt::Dim3;
using dim3 = ::sinter::simt::Dim3;
#define threadIdx (::sinter::simt::here().threadIdx)
#define blockIdx (::sinter::simt::here().blockIdx)
#define blockDim (::sinter::simt::here().blockDim)
#define gridDim (::sinter::simt::here().gridDim)
constexpr int warpSize = 32;

inline void __syncthreads() { ::sinter::simt::syncthreads(); }
/// Every write before it is seen by every thread before any write after it
/// (the blocks of a launch run on several host threads).
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

namespace sinter::simt::detail {

template <typename T> uint64_t bitsOf(T value) {
  static_assert(sizeof(T) <= 8, "a warp shuffle moves at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

template <typename T> T valueOf(uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

/// A shuffle reading absolute lane `source` (-1: the caller's own value).
template <typename T> T shuffleFrom(unsigned mask, T value, int source) {
  int lane = ::sinter::simt::laneId();
  return valueOf<T>(::sinter::simt::warpExchange(::sinter::simt::WarpOp::Shuffle, mask,
                                                 bitsOf(value), source < 0 ? lane : source));
}

} // namespace sinter::simt::detail

// The GPU's rules, within segments of `width` lanes (a power of two): a
// source lane is taken modulo the width; up and down past the segment's
// ends, and xor into a later segment, read the caller's own value.
template <typename T> T __shfl_sync(unsigned mask, T value, int src, int width = warpSize) {
  int lane = ::sinter::simt::laneId();
  return ::sinter::simt::detail::shuffleFrom(mask, value,
                                             (lane & ~(width - 1)) + (src & (width - 1)));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  int lane = ::sinter::simt::laneId();
  bool inside = (lane & (width - 1)) + static_cast<int>(delta) < width;
  return ::sinter::simt::detail::shuffleFrom(mask, value,
                                             inside ? lane + static_cast<int>(delta) : -1);
}
template <typename T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = warpSize) {
  int lane = ::sinter::simt::laneId();
  bool inside = (lane & (width - 1)) - static_cast<int>(delta) >= 0;
  return ::sinter::simt::detail::shuffleFrom(mask, value,
                                             inside ? lane - static_cast<int>(delta) : -1);
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int laneMask, int width = warpSize) {
  int lane = ::sinter::simt::laneId();
  int source = (lane ^ laneMask) & (warpSize - 1);
  return ::sinter::simt::detail::shuffleFrom(mask, value,
                                             source / width > lane / width ? -1 : source);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return static_cast<unsigned>(::sinter::simt::warpExchange(::sinter::simt::WarpOp::Ballot, mask,
                                                            predicate != 0 ? 1 : 0, 0));
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, predicate) == mask;
}
inline unsigned __activemask() { return ::sinter::simt::activeMask(); }

// Atomics: the host's, since blocks run on several threads at once.
template <typename T> T atomicAdd(T *address, std::type_identity_t<T> value) {
  return std::atomic_ref<T>(*address).fetch_add(value);
}
template <typename T> T atomicSub(T *address, std::type_identity_t<T> value) {
  return std::atomic_ref<T>(*address).fetch_sub(value);
}
template <typename T> T atomicExch(T *address, std::type_identity_t<T> value) {
  return std::atomic_ref<T>(*address).exchange(value);
}
template <typename T>
T atomicCAS(T *address, std::type_identity_t<T> compare, std::type_identity_t<T> value) {
  std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
  return compare;
}
template <typename T> T atomicMax(T *address, std::type_identity_t<T> value) {
  std::atomic_ref<T> ref(*address);
  T old = ref.load();
  while (old < value && !ref.compare_exchange_weak(old, value)) {
  }
  return old;
}
template <typename T> T atomicMin(T *address, std::type_identity_t<T> value) {
  std::atomic_ref<T> ref(*address);
  T old = ref.load();
  while (value < old && !ref.compare_exchange_weak(old, value)) {
  }
  return old;
}

// Intrinsics, with the GPU's results where the host has the same function.
template <typename T> inline T __ldg(const T *address) { return *address; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline unsigned __float_as_uint(float x) {
  unsigned bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
inline float __uint_as_float(unsigned bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
inline int __float_as_int(float x) { return static_cast<int>(__float_as_uint(x)); }
inline float __int_as_float(int bits) { return __uint_as_float(static_cast<unsigned>(bits)); }
using std::isfinite;
using std::isnan;

/// Launches `kernel` (a function of this source) on `shape` with `args`, as
/// cuLaunchKernel would, through the simulator.
template <typename... Params, typename... Args>
::sinter::Status sinter_simulate(const char *name, void (*kernel)(Params...),
                                 const ::sinter::runtime::LaunchShape &shape,
                                 const ::sinter::simt::Options &options, Args &&...args) {
  std::tuple<Params...> parameters(std::forward<Args>(args)...);
  return ::sinter::simt::launch(name, shape, options, [&] { std::apply(kernel, parameters); });
}

#endif // SINTER_KERNELS_CUDA_SIMT_H
