//===- prologue.h - what every generated CUDA kernel source includes ------===//
//
// Generated CUDA C++ (compiler/lib/Renderers/CudaRenderer.cpp) compiles
// with NVRTC for the GPU and with the host compiler for the CUDA simulator
// (SINTER_SIMULATED defined: the SIMT prelude, Note [The CUDA simulator]).
// NVRTC has no standard headers: the fixed-width integer types the kernels
// use are defined here for it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CUDA_PROLOGUE_H
#define SINTER_KERNELS_CUDA_PROLOGUE_H

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#elif defined(__CUDACC__)
#include <cstdint>
#else
#include "cuda/simt.h"
#include <cstdint>
#endif

#include "common/philox.h"
#include "common/scalar.h"
#include "cuda/library.h"

// SINTER_ASSUME_ALIGNED(p): the kernel found p 16-byte aligned (Note [Vector
// loads] in compiler/lib/Renderers/CudaRenderer.cpp), and says so to NVRTC,
// which then joins neighbouring loads and stores of p into 128-bit ones.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SINTER_ASSUME_ALIGNED(p)                                                                   \
  __builtin_assume((reinterpret_cast<unsigned long long>(p) & 15ULL) == 0)
#else
#define SINTER_ASSUME_ALIGNED(p) static_cast<void>(p)
#endif

#endif // SINTER_KERNELS_CUDA_PROLOGUE_H
