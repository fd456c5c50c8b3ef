//===- library.h - the library ops as CUDA device code ---------------------===//
//
// Note [Library ops on the GPU]
// The ops that are not fused (gather, scatter-add, concat, argmax, 2-D
// pooling and convolutions with their gradients; matrix products are
// library calls of the Program instead: Note [Matrix products as data]),
// as device functions that a generated kernel calls with its shape as
// literals (compiler/lib/Codegen/CudaKernels.cpp), so that after inlining
// every bound is a constant, as the CPU's templates (kernels/cpu/) have
// them. Each is a grid-stride loop over what one thread computes alone,
// in the CPU's order and with its rules (a NaN wins a maximum, the first
// largest wins a tie, an index out of range reads zeros and adds nothing),
// so every result is the same run after run, and no float is added by
// atomics:
//  - scatter-add gives each (outer, column) pair a thread, which copies its
//    column of the table and adds the values in index order: the CPU's
//    order, the same bits;
//  - the pooling gradient gives each input element a thread, which adds
//    the gradients of the windows it won (a max) or lies in (an average),
//    in the CPU's window order: the same bits;
//  - a convolution gives each output element (its gradients: each input
//    element, each filter weight) a thread that sums over channels and the
//    filter window (images and output pixels) in order. Direct loops: the
//    same arithmetic as the CPU's im2col products, in another order (equal
//    to rounding), and far slower than cuDNN or an implicit GEMM on tensor
//    cores, which replace them when speed on the GPU comes;
//  - except the filters' gradient where a thread per weight would leave
//    most of a GPU idle (fewer weights than 1024 blocks of 256 threads,
//    kCudaFillBlocks, each the sum of at least 256 terms: resnet18's
//    first convolution at batch 32 has 9,408 weights of 401,408 terms,
//    9,408 threads where an H100 holds 270,336 at once): there a warp
//    takes a weight (conv2dBackwardFilterWarps,
//    chosen by compiler/lib/Codegen/CudaKernels.cpp), lane l adds terms l,
//    l + 32, ... in order (a warp's loads are neighbouring output pixels),
//    and the lanes combine by the butterfly: 32 times the threads, and one
//    fixed order on every run and grid.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CUDA_LIBRARY_H
#define SINTER_KERNELS_CUDA_LIBRARY_H

namespace sinter::cuda {

/// Calls body(i) for every i in [0, n) this thread takes of a grid-stride
/// loop.
template <typename Body> __device__ __forceinline__ void forEach(int64_t n, Body body) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    body(i);
}

/// out[a, q, c] = table[a, indices[q], c] (zeros for an index outside
/// [0, extent)).
template <typename T, typename I>
__device__ __forceinline__ void gather(int64_t outer, int64_t count, int64_t extent, int64_t inner,
                                       const T *table, const I *indices, T *out) {
  forEach(outer * count * inner, [&](int64_t i) {
    const int64_t c = i % inner, q = i / inner % count, a = i / (inner * count);
    const int64_t index = static_cast<int64_t>(indices[q]);
    out[i] = index >= 0 && index < extent ? table[(a * extent + index) * inner + c] : T(0);
  });
}

/// out = table, then values[a, q, c] added at out[a, indices[q], c] in
/// order of q (an index outside [0, extent) adds nothing).
template <typename T, typename I>
__device__ __forceinline__ void scatterAdd(int64_t outer, int64_t count, int64_t extent,
                                           int64_t inner, const T *table, const I *indices,
                                           const T *values, T *out) {
  forEach(outer * inner, [&](int64_t i) {
    const int64_t c = i % inner, a = i / inner;
    for (int64_t e = 0; e < extent; ++e)
      out[(a * extent + e) * inner + c] = table[(a * extent + e) * inner + c];
    for (int64_t q = 0; q < count; ++q) {
      const int64_t index = static_cast<int64_t>(indices[q]);
      if (index >= 0 && index < extent)
        out[(a * extent + index) * inner + c] += values[(a * count + q) * inner + c];
    }
  });
}

/// One input [outer, extent, inner] of a concatenation into out [outer,
/// outExtent, inner] at `offset` along the middle axis.
template <typename T>
__device__ __forceinline__ void concatPart(int64_t outer, int64_t extent, int64_t inner,
                                           int64_t outExtent, int64_t offset, const T *in, T *out) {
  forEach(outer * extent * inner, [&](int64_t i) {
    const int64_t e = i % (extent * inner), a = i / (extent * inner);
    out[(a * outExtent + offset) * inner + e] = in[i];
  });
}

/// out[a, c]: the first index of the largest in[a, :, c] (a NaN over any
/// number), 0 for an empty axis.
template <typename T, typename R>
__device__ __forceinline__ void argmax(int64_t outer, int64_t extent, int64_t inner, const T *in,
                                       R *out) {
  forEach(outer * inner, [&](int64_t i) {
    const int64_t c = i % inner, a = i / inner;
    int64_t best = 0;
    for (int64_t e = 1; e < extent; ++e) {
      const T x = in[(a * extent + e) * inner + c], m = in[(a * extent + best) * inner + c];
      if (x > m || (x != x && m == m))
        best = e;
    }
    out[i] = static_cast<R>(best);
  });
}

/// Pooling over [planes, height, width] (planes = N x C) into [planes,
/// outH, outW].
struct Pool2d {
  int64_t planes, height, width, outH, outW, kernelH, kernelW, strideY, strideX, padY, padX;
  bool max; // else the average (padding counted, as PyTorch's default)
};

/// The input element that wins output o's max window (the first largest, a
/// NaN over a number), or -1 for a window of padding only.
template <typename T>
__device__ __forceinline__ int64_t poolWinner(const Pool2d &s, const T *in, int64_t o) {
  const int64_t ox = o % s.outW, oy = o / s.outW % s.outH, p = o / (s.outW * s.outH);
  int64_t best = -1;
  for (int64_t ky = 0; ky < s.kernelH; ++ky)
    for (int64_t kx = 0; kx < s.kernelW; ++kx) {
      const int64_t iy = oy * s.strideY - s.padY + ky, ix = ox * s.strideX - s.padX + kx;
      if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width)
        continue;
      const int64_t x = (p * s.height + iy) * s.width + ix;
      if (best < 0 || in[x] > in[best] || (in[x] != in[x] && in[best] == in[best]))
        best = x;
    }
  return best;
}

template <typename T> __device__ __forceinline__ void pool2d(const Pool2d &s, const T *in, T *out) {
  const float window = static_cast<float>(s.kernelH * s.kernelW);
  forEach(s.planes * s.outH * s.outW, [&](int64_t o) {
    if (s.max) {
      const int64_t best = poolWinner(s, in, o);
      out[o] = best >= 0 ? in[best] : T(0);
      return;
    }
    const int64_t ox = o % s.outW, oy = o / s.outW % s.outH, p = o / (s.outW * s.outH);
    T sum = T(0);
    for (int64_t ky = 0; ky < s.kernelH; ++ky)
      for (int64_t kx = 0; kx < s.kernelW; ++kx) {
        const int64_t iy = oy * s.strideY - s.padY + ky, ix = ox * s.strideX - s.padX + kx;
        if (iy >= 0 && iy < s.height && ix >= 0 && ix < s.width)
          sum += in[(p * s.height + iy) * s.width + ix] / window;
      }
    out[o] = sum;
  });
}

/// The input's gradient from the input (which element won each max
/// window) and the output's gradient.
template <typename T>
__device__ __forceinline__ void pool2dBackward(const Pool2d &s, const T *in, const T *gradOut,
                                               T *gradIn) {
  const float window = static_cast<float>(s.kernelH * s.kernelW);
  forEach(s.planes * s.height * s.width, [&](int64_t x) {
    const int64_t ix = x % s.width, iy = x / s.width % s.height, p = x / (s.width * s.height);
    // The windows that hold (iy, ix), in the order of their outputs.
    const int64_t y0 = iy + s.padY - s.kernelH + 1, x0 = ix + s.padX - s.kernelW + 1;
    const int64_t oyLo = y0 <= 0 ? 0 : (y0 + s.strideY - 1) / s.strideY;
    const int64_t oxLo = x0 <= 0 ? 0 : (x0 + s.strideX - 1) / s.strideX;
    T sum = T(0);
    for (int64_t oy = oyLo; oy < s.outH && oy * s.strideY - s.padY <= iy; ++oy)
      for (int64_t ox = oxLo; ox < s.outW && ox * s.strideX - s.padX <= ix; ++ox) {
        const int64_t o = (p * s.outH + oy) * s.outW + ox;
        if (s.max ? poolWinner(s, in, o) == x : true)
          sum += s.max ? gradOut[o] : gradOut[o] / window;
      }
    gradIn[x] = sum;
  });
}

/// A convolution: input [batch, channels, height, width], filters
/// [filters, channels / groups, kernelH, kernelW], output [batch, filters,
/// outH, outW].
struct Conv2d {
  int64_t batch, channels, height, width, filters, kernelH, kernelW, outH, outW;
  int64_t strideY, strideX, padY, padX, dilationY, dilationX, groups;
  /// The input row (column) that output row `oy` (column `ox`) reads at
  /// filter row `ky` (column `kx`); outside [0, height) it is padding.
  __device__ __forceinline__ int64_t inputRow(int64_t oy, int64_t ky) const {
    return oy * strideY - padY + ky * dilationY;
  }
  __device__ __forceinline__ int64_t inputColumn(int64_t ox, int64_t kx) const {
    return ox * strideX - padX + kx * dilationX;
  }
};

template <typename T>
__device__ __forceinline__ void conv2d(const Conv2d &s, const T *in, const T *w, T *out) {
  const int64_t og = s.filters / s.groups, cg = s.channels / s.groups;
  forEach(s.batch * s.filters * s.outH * s.outW, [&](int64_t o) {
    const int64_t ox = o % s.outW, oy = o / s.outW % s.outH, f = o / (s.outW * s.outH) % s.filters,
                  b = o / (s.outW * s.outH * s.filters), g = f / og;
    T sum = T(0);
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t ky = 0; ky < s.kernelH; ++ky) {
        const int64_t iy = s.inputRow(oy, ky);
        if (iy < 0 || iy >= s.height)
          continue;
        for (int64_t kx = 0; kx < s.kernelW; ++kx) {
          const int64_t ix = s.inputColumn(ox, kx);
          if (ix >= 0 && ix < s.width)
            sum += in[((b * s.channels + g * cg + c) * s.height + iy) * s.width + ix] *
                   w[((f * cg + c) * s.kernelH + ky) * s.kernelW + kx];
        }
      }
    out[o] = sum;
  });
}

/// The input's gradient from the output's gradient and the filters.
template <typename T>
__device__ __forceinline__ void conv2dBackwardInput(const Conv2d &s, const T *gradOut, const T *w,
                                                    T *gradIn) {
  const int64_t og = s.filters / s.groups, cg = s.channels / s.groups;
  forEach(s.batch * s.channels * s.height * s.width, [&](int64_t x) {
    const int64_t ix = x % s.width, iy = x / s.width % s.height,
                  ch = x / (s.width * s.height) % s.channels,
                  b = x / (s.width * s.height * s.channels), g = ch / cg, c = ch % cg;
    T sum = T(0);
    for (int64_t f = g * og; f < (g + 1) * og; ++f)
      for (int64_t ky = 0; ky < s.kernelH; ++ky) {
        const int64_t ty = iy + s.padY - ky * s.dilationY;
        if (ty < 0 || ty % s.strideY != 0 || ty / s.strideY >= s.outH)
          continue;
        for (int64_t kx = 0; kx < s.kernelW; ++kx) {
          const int64_t tx = ix + s.padX - kx * s.dilationX;
          if (tx < 0 || tx % s.strideX != 0 || tx / s.strideX >= s.outW)
            continue;
          sum +=
              gradOut[((b * s.filters + f) * s.outH + ty / s.strideY) * s.outW + tx / s.strideX] *
              w[((f * cg + c) * s.kernelH + ky) * s.kernelW + kx];
        }
      }
    gradIn[x] = sum;
  });
}

/// The filters' gradient from the input and the output's gradient, a warp
/// per weight (Note [Library ops on the GPU]). Every lane of a warp takes
/// the same weights, so the shuffles see the whole warp.
template <typename T>
__device__ __forceinline__ void conv2dBackwardFilterWarps(const Conv2d &s, const T *in,
                                                          const T *gradOut, T *gradW) {
  const int64_t og = s.filters / s.groups, cg = s.channels / s.groups;
  const int64_t weights = s.filters * cg * s.kernelH * s.kernelW;
  const int64_t pixels = s.outH * s.outW, terms = s.batch * pixels;
  const int64_t lane = threadIdx.x % 32, warpsABlock = blockDim.x / 32;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * warpsABlock + threadIdx.x / 32; k < weights;
       k += static_cast<int64_t>(gridDim.x) * warpsABlock) {
    const int64_t kx = k % s.kernelW, ky = k / s.kernelW % s.kernelH,
                  c = k / (s.kernelW * s.kernelH) % cg, f = k / (s.kernelW * s.kernelH * cg),
                  ch = f / og * cg + c;
    // The product's type: f32 for every element type (a half value reads
    // as a float), which the shuffles take.
    decltype(in[0] * gradOut[0]) sum = 0;
    for (int64_t t = lane; t < terms; t += 32) {
      const int64_t ox = t % s.outW, oy = t / s.outW % s.outH, b = t / pixels;
      const int64_t iy = s.inputRow(oy, ky), ix = s.inputColumn(ox, kx);
      if (iy >= 0 && iy < s.height && ix >= 0 && ix < s.width)
        sum += in[((b * s.channels + ch) * s.height + iy) * s.width + ix] *
               gradOut[((b * s.filters + f) * s.outH + oy) * s.outW + ox];
    }
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0)
      gradW[k] = T(sum);
  }
}

/// The filters' gradient from the input and the output's gradient, a
/// thread per weight.
template <typename T>
__device__ __forceinline__ void conv2dBackwardFilter(const Conv2d &s, const T *in, const T *gradOut,
                                                     T *gradW) {
  const int64_t og = s.filters / s.groups, cg = s.channels / s.groups;
  forEach(s.filters * cg * s.kernelH * s.kernelW, [&](int64_t k) {
    const int64_t kx = k % s.kernelW, ky = k / s.kernelW % s.kernelH,
                  c = k / (s.kernelW * s.kernelH) % cg, f = k / (s.kernelW * s.kernelH * cg),
                  ch = f / og * cg + c;
    T sum = T(0);
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t oy = 0; oy < s.outH; ++oy) {
        const int64_t iy = s.inputRow(oy, ky);
        if (iy < 0 || iy >= s.height)
          continue;
        for (int64_t ox = 0; ox < s.outW; ++ox) {
          const int64_t ix = s.inputColumn(ox, kx);
          if (ix >= 0 && ix < s.width)
            sum += in[((b * s.channels + ch) * s.height + iy) * s.width + ix] *
                   gradOut[((b * s.filters + f) * s.outH + oy) * s.outW + ox];
        }
      }
    gradW[k] = sum;
  });
}

} // namespace sinter::cuda

#endif // SINTER_KERNELS_CUDA_LIBRARY_H
