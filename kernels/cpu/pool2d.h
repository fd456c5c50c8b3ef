//===- pool2d.h - 2-D max and average pooling, on the host ----------------===//
//
// Pooling over [N, C, H, W] and its gradient, as the reference executor
// defines them: a max window's first largest element wins (a NaN over any
// number), padding takes no part in a max and counts in an average (as
// PyTorch's default), and the gradient goes to the element that won. The
// shape is a constant of the generated kernel (a template argument), so
// every bound is a compile-time constant.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_POOL2D_H
#define SINTER_KERNELS_CPU_POOL2D_H

#include <cstdint>

struct sinter_pool2d_shape {
  // planes = N * C of the input [N, C, height, width]; output [N, C, out_h, out_w].
  int64_t planes, height, width, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_y, stride_x, pad_y, pad_x;
  bool max; // else the average
};

namespace sinter_pool2d_detail {

// Calls visit(o, x) for each input element x of output o's window, then
// done(o); in the order of the reference executor.
template <const sinter_pool2d_shape &S, typename Visit, typename Done>
static inline void windows(Visit visit, Done done) {
  for (int64_t p = 0; p < S.planes; ++p)
    for (int64_t y = 0; y < S.out_h; ++y)
      for (int64_t xx = 0; xx < S.out_w; ++xx) {
        const int64_t o = (p * S.out_h + y) * S.out_w + xx;
        for (int64_t ky = 0; ky < S.kernel_h; ++ky)
          for (int64_t kx = 0; kx < S.kernel_w; ++kx) {
            const int64_t iy = y * S.stride_y - S.pad_y + ky;
            const int64_t ix = xx * S.stride_x - S.pad_x + kx;
            if (iy < 0 || iy >= S.height || ix < 0 || ix >= S.width)
              continue;
            visit(o, (p * S.height + iy) * S.width + ix);
          }
        done(o);
      }
}

// Whether `x` takes the max over `best` (-1: none yet): larger, or a NaN
// over a number.
template <typename T> static inline bool wins(const T *in, int64_t x, int64_t best) {
  return best < 0 || in[x] > in[best] || (in[x] != in[x] && in[best] == in[best]);
}

// Calls winner(o, x) with the element x that wins output o's max window,
// for each window that holds an element.
template <const sinter_pool2d_shape &S, typename T, typename Winner>
static inline void maxWindows(const T *input, Winner winner) {
  int64_t best = -1;
  windows<S>(
      [&](int64_t, int64_t x) {
        if (wins(input, x, best))
          best = x;
      },
      [&](int64_t o) {
        if (best >= 0)
          winner(o, best);
        best = -1;
      });
}

template <typename T> static inline void zero(T *x, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    x[i] = 0;
}

} // namespace sinter_pool2d_detail

template <const sinter_pool2d_shape &S, typename T>
static inline void sinter_pool2d(const T *input, T *output) {
  namespace d = sinter_pool2d_detail;
  constexpr float window = static_cast<float>(S.kernel_h * S.kernel_w);
  d::zero(output, S.planes * S.out_h * S.out_w);
  if constexpr (S.max)
    d::maxWindows<S>(input, [&](int64_t o, int64_t best) { output[o] = input[best]; });
  else
    d::windows<S>([&](int64_t o, int64_t x) { output[o] += input[x] / window; }, [](int64_t) {});
}

// grad_input from the input (which element won each max) and the output's
// gradient.
template <const sinter_pool2d_shape &S, typename T>
static inline void sinter_pool2d_backward(const T *input, const T *grad_output, T *grad_input) {
  namespace d = sinter_pool2d_detail;
  constexpr float window = static_cast<float>(S.kernel_h * S.kernel_w);
  d::zero(grad_input, S.planes * S.height * S.width);
  if constexpr (S.max)
    d::maxWindows<S>(input, [&](int64_t o, int64_t best) { grad_input[best] += grad_output[o]; });
  else
    d::windows<S>([&](int64_t o, int64_t x) { grad_input[x] += grad_output[o] / window; },
                  [](int64_t) {});
}

#endif // SINTER_KERNELS_CPU_POOL2D_H
