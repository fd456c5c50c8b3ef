//===- kernel.h - what every generated CPU kernel library includes --------===//
//
// The compiler's CPU renderer (compiler/lib/Renderers/CpuRenderer.cpp) writes
// one C++ translation unit per program, which starts by including this
// header: the libraries the kernels call and the helpers they use. Plain
// C++17 for the host compiler (with -fopenmp); the scalar helpers are in
// common/, which NVRTC also compiles. Its text is part of the kernel cache's
// key.
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

// The scalar helpers (sinter_wrap, sinter_select, sinter_exp), the same
// text the GPU's kernels include.
#include "common/scalar.h"

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
