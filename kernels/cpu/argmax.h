//===- argmax.h - the index of the largest element along an axis ----------===//
//
// The input viewed as [Outer, Extent, Inner]; out[a, c] is the first index
// of the largest element along the middle axis (a NaN over any number, as
// PyTorch), 0 for an empty axis.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_ARGMAX_H
#define SINTER_KERNELS_CPU_ARGMAX_H

#include <cstdint>

template <int64_t Outer, int64_t Extent, int64_t Inner, typename T, typename R>
static inline void sinter_argmax(const T *in, R *out) {
  for (int64_t a = 0; a < Outer; ++a)
    for (int64_t c = 0; c < Inner; ++c) {
      int64_t best = 0;
      for (int64_t e = 1; e < Extent; ++e) {
        const T x = in[(a * Extent + e) * Inner + c], m = in[(a * Extent + best) * Inner + c];
        if (x > m || (x != x && m == m))
          best = e;
      }
      out[a * Inner + c] = static_cast<R>(best);
    }
}

#endif // SINTER_KERNELS_CPU_ARGMAX_H
