//===- concat.h - one input of a concatenation, on the host ---------------===//
//
// An input viewed as [Outer, Extent, Inner] copied into the output
// [Outer, OutExtent, Inner] at Offset along the middle axis; a concatenation
// is one call per input.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_CONCAT_H
#define SINTER_KERNELS_CPU_CONCAT_H

#include <cstdint>

template <int64_t Outer, int64_t Extent, int64_t Inner, int64_t OutExtent, int64_t Offset,
          typename T>
static inline void sinter_concat_part(const T *in, T *out) {
  for (int64_t a = 0; a < Outer; ++a)
    for (int64_t e = 0; e < Extent * Inner; ++e)
      out[(a * OutExtent + Offset) * Inner + e] = in[a * (Extent * Inner) + e];
}

#endif // SINTER_KERNELS_CPU_CONCAT_H
