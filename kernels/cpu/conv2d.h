//===- conv2d.h - 2-D convolutions as matrix products, on the host --------===//
//
// A convolution and its two gradients as im2col products: for a chunk of
// images and a group, the input's patches become the columns of a
// [Cg*KH*KW, images*OH*OW] matrix, and one sgemm multiplies it with the
// group's filters. The input gradient multiplies the transposed filters with
// the output gradient and adds the columns back into their patches (col2im,
// channel by channel); the filter gradient sums over the chunks in order.
// Deterministic throughout.
//
// The shape and the compiler's choices (images per product, a transposed
// filter gradient, the product's library and threads: Notes [Images per
// product], [Transposed filter gradients], [Which library multiplies] and
// [Small products on one thread] in compiler/lib/Codegen/CpuLibrary.cpp) are
// a constant of the generated kernel, passed as a template argument, so every
// bound and stride below is a compile-time constant and the loops vectorise
// as if written out for that shape.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_CONV2D_H
#define SINTER_KERNELS_CPU_CONV2D_H

#include "cpu/sgemm.h"

#include <cstdint>

struct sinter_conv2d_shape {
  // input [batch, channels, height, width], filters [filters, channels /
  // groups, kernel_h, kernel_w], output [batch, filters, out_h, out_w].
  int64_t batch, channels, height, width, filters, kernel_h, kernel_w, out_h, out_w;
  int64_t stride_y, stride_x, pad_y, pad_x, dilation_y, dilation_x, groups;
  // The compiler's choices: images side by side in one column matrix; the
  // filter gradient computed transposed into `wt`; the product by OpenBLAS
  // (else oneDNN), on the calling thread only.
  int64_t images;
  bool transposed_gradient, open_blas, one_thread;
};

namespace sinter_conv2d_detail {

template <const sinter_conv2d_shape &S> struct Dims {
  static_assert(S.groups > 0 && S.channels % S.groups == 0 && S.filters % S.groups == 0 &&
                    S.images > 0 && (S.batch == 0 || S.batch % S.images == 0),
                "a convolution's groups divide its channels and filters, its chunks its batch");
  static constexpr int64_t og = S.filters / S.groups, cg = S.channels / S.groups;
  static constexpr int64_t k = cg * S.kernel_h * S.kernel_w, p = S.out_h * S.out_w;
  static constexpr int64_t in_image = S.channels * S.height * S.width, out_image = S.filters * p;
  static constexpr int64_t plane = S.height * S.width, n = S.images * p;
  static constexpr bool empty = k == 0 || p == 0 || og == 0 || S.batch == 0;
};

// The output columns ox in [lo, hi) of filter column kx whose input pixel
// (ox * stride_x + off, off = kx * dilation_x - pad_x) is inside the image:
// the loops over them have no test, and vectorise.
template <const sinter_conv2d_shape &S>
static inline void columns(int64_t kx, int64_t &off, int64_t &lo, int64_t &hi) {
  constexpr int64_t sx = S.stride_x;
  off = kx * S.dilation_x - S.pad_x;
  lo = off >= 0 ? 0 : (sx - 1 - off) / sx;
  if (lo > S.out_w)
    lo = S.out_w;
  hi = S.width - off <= 0 ? 0 : (S.width + sx - 1 - off) / sx;
  if (hi > S.out_w)
    hi = S.out_w;
  if (hi < lo)
    hi = lo;
}

// Row r = (c, ky, kx) of the column matrix, column j * p + oy * OW + ox,
// holds the input pixel (oy * sy - py + ky * dy, ox * sx + off) of image
// b0 + j, channel g * cg + c, or 0 in the padding.
template <const sinter_conv2d_shape &S>
static inline void im2col(const float *input, float *col, int64_t b0, int64_t g) {
  using D = Dims<S>;
#pragma omp parallel for
  for (int64_t r = 0; r < D::k; ++r) {
    const int64_t kx = r % S.kernel_w, ky = r / S.kernel_w % S.kernel_h,
                  c = r / (S.kernel_h * S.kernel_w);
    int64_t off, lo, hi;
    columns<S>(kx, off, lo, hi);
    for (int64_t j = 0; j < S.images; ++j) {
      const float *image = input + (b0 + j) * D::in_image + (g * D::cg + c) * D::plane;
      float *row = col + r * D::n + j * D::p;
      for (int64_t oy = 0; oy < S.out_h; ++oy) {
        const int64_t iy = oy * S.stride_y - S.pad_y + ky * S.dilation_y;
        float *to = row + oy * S.out_w;
        if (iy < 0 || iy >= S.height) {
          for (int64_t ox = 0; ox < S.out_w; ++ox)
            to[ox] = 0.0f;
          continue;
        }
        const float *from = image + iy * S.width;
        for (int64_t ox = 0; ox < lo; ++ox)
          to[ox] = 0.0f;
        for (int64_t ox = lo; ox < hi; ++ox)
          to[ox] = from[ox * S.stride_x + off];
        for (int64_t ox = hi; ox < S.out_w; ++ox)
          to[ox] = 0.0f;
      }
    }
  }
}

// Adds the column matrix back into the input gradient's patches (col2im).
template <const sinter_conv2d_shape &S>
static inline void col2im(const float *col, float *grad_input, int64_t b0, int64_t g) {
  using D = Dims<S>;
#pragma omp parallel for
  for (int64_t c = 0; c < D::cg; ++c)
    for (int64_t j = 0; j < S.images; ++j) {
      float *image = grad_input + (b0 + j) * D::in_image + (g * D::cg + c) * D::plane;
      for (int64_t ky = 0; ky < S.kernel_h; ++ky)
        for (int64_t kx = 0; kx < S.kernel_w; ++kx) {
          int64_t off, lo, hi;
          columns<S>(kx, off, lo, hi);
          const float *row = col + ((c * S.kernel_h + ky) * S.kernel_w + kx) * D::n + j * D::p;
          for (int64_t oy = 0; oy < S.out_h; ++oy) {
            const int64_t iy = oy * S.stride_y - S.pad_y + ky * S.dilation_y;
            if (iy < 0 || iy >= S.height)
              continue;
            float *to = image + iy * S.width;
            const float *from = row + oy * S.out_w;
            for (int64_t ox = lo; ox < hi; ++ox)
              to[ox * S.stride_x + off] += from[ox];
          }
        }
    }
}

// The output (gradient) of the chunk's images, group g, as one [og, n]
// matrix `aux`: gathered into it from `output` (ToOutput false), or
// scattered from it back into `output`.
template <const sinter_conv2d_shape &S, bool ToOutput>
static inline void moveOutputs(const float *from, float *to, int64_t b0, int64_t g) {
  using D = Dims<S>;
#pragma omp parallel for
  for (int64_t o = 0; o < D::og; ++o)
    for (int64_t j = 0; j < S.images; ++j)
      for (int64_t q = 0; q < D::p; ++q) {
        int64_t packed = o * D::n + j * D::p + q;
        int64_t laidOut = (b0 + j) * D::out_image + (g * D::og + o) * D::p + q;
        if constexpr (ToOutput)
          to[laidOut] = from[packed];
        else
          to[packed] = from[laidOut];
      }
}

template <const sinter_conv2d_shape &S>
static inline void product(bool transa, bool transb, int64_t m, int64_t n, int64_t k,
                           const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                           float *c, int64_t ldc) {
  sinter_sgemm_row_major(S.open_blas, S.one_thread, transa, transb, m, n, k, a, lda, b, ldb, beta,
                         c, ldc);
}

template <typename T> static inline void zero(T *x, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    x[i] = 0;
}

} // namespace sinter_conv2d_detail

// output = conv(input, filters). col: [k, n] floats; aux: [og, n] when
// images > 1 (else unused).
template <const sinter_conv2d_shape &S>
static inline void sinter_conv2d(const float *input, const float *filters, float *output,
                                 float *col, float *aux) {
  namespace d = sinter_conv2d_detail;
  using D = d::Dims<S>;
  d::zero(output, S.batch * D::out_image);
  if constexpr (!D::empty) {
    for (int64_t b0 = 0; b0 < S.batch; b0 += S.images)
      for (int64_t g = 0; g < S.groups; ++g) {
        d::im2col<S>(input, col, b0, g);
        float *matrix = S.images == 1 ? output + b0 * D::out_image + g * D::og * D::p : aux;
        d::product<S>(false, false, D::og, D::n, D::k, filters + g * D::og * D::k, D::k, col, D::n,
                      0.0f, matrix, D::n);
        if (S.images > 1)
          d::moveOutputs<S, true>(aux, output, b0, g);
      }
  }
}

// grad_input from the output gradient and the filters.
template <const sinter_conv2d_shape &S>
static inline void sinter_conv2d_backward_input(const float *grad_output, const float *filters,
                                                float *grad_input, float *col, float *aux) {
  namespace d = sinter_conv2d_detail;
  using D = d::Dims<S>;
  d::zero(grad_input, S.batch * D::in_image);
  if constexpr (!D::empty) {
    for (int64_t b0 = 0; b0 < S.batch; b0 += S.images)
      for (int64_t g = 0; g < S.groups; ++g) {
        const float *matrix = grad_output + b0 * D::out_image + g * D::og * D::p;
        if (S.images > 1) {
          d::moveOutputs<S, false>(grad_output, aux, b0, g);
          matrix = aux;
        }
        d::product<S>(true, false, D::k, D::n, D::og, filters + g * D::og * D::k, D::k, matrix,
                      D::n, 0.0f, col, D::n);
        d::col2im<S>(col, grad_input, b0, g);
      }
  }
}

// grad_filters from the input and the output gradient: [og x k] = gradient ·
// columnsᵀ per group, summed over the chunks; or, with transposed_gradient,
// its transpose [k x og] = columns · gradientᵀ into wt ([groups, k, og]
// floats), transposed into place at the end.
template <const sinter_conv2d_shape &S>
static inline void sinter_conv2d_backward_filter(const float *input, const float *grad_output,
                                                 float *grad_filters, float *col, float *aux,
                                                 float *wt) {
  namespace d = sinter_conv2d_detail;
  using D = d::Dims<S>;
  d::zero(grad_filters, S.filters * D::k);
  if constexpr (!D::empty) {
    constexpr bool t = S.transposed_gradient;
    constexpr int64_t rows = t ? D::k : D::og, width = t ? D::og : D::k;
    for (int64_t b0 = 0; b0 < S.batch; b0 += S.images)
      for (int64_t g = 0; g < S.groups; ++g) {
        d::im2col<S>(input, col, b0, g);
        const float *matrix = grad_output + b0 * D::out_image + g * D::og * D::p;
        if (S.images > 1) {
          d::moveOutputs<S, false>(grad_output, aux, b0, g);
          matrix = aux;
        }
        d::product<S>(false, true, rows, width, D::n, t ? col : matrix, D::n, t ? matrix : col,
                      D::n, b0 == 0 ? 0.0f : 1.0f, (t ? wt : grad_filters) + g * D::og * D::k,
                      width);
      }
    if constexpr (t) {
#pragma omp parallel for if (S.groups * D::og * D::k >= 32768)
      for (int64_t go = 0; go < S.groups * D::og; ++go)
        for (int64_t r = 0; r < D::k; ++r)
          grad_filters[go * D::k + r] = wt[(go / D::og * D::k + r) * D::og + go % D::og];
    }
  }
}

#endif // SINTER_KERNELS_CPU_CONV2D_H
