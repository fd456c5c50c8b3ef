//===- gather.h - gather and scatter-add along one axis, on the host ------===//
//
// A table viewed as [Outer, Extent, Inner] and indices of Count elements:
// gather writes [Outer, Count, Inner] with out[a, q, c] = table[a,
// indices[q], c]; scatter-add adds values [Outer, Count, Inner] into a copy
// of the table at the same places, in index order (deterministic). An index
// outside [0, Extent) reads zeros and adds nothing (the reference executor
// reports it; checked builds will too).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_CPU_GATHER_H
#define SINTER_KERNELS_CPU_GATHER_H

#include <cstdint>

template <int64_t Outer, int64_t Count, int64_t Extent, int64_t Inner, typename T, typename I>
static inline void sinter_gather(const T *table, const I *indices, T *out) {
  for (int64_t a = 0; a < Outer; ++a)
    for (int64_t q = 0; q < Count; ++q) {
      const int64_t index = static_cast<int64_t>(indices[q]);
      const bool valid = index >= 0 && index < Extent;
      for (int64_t c = 0; c < Inner; ++c)
        out[(a * Count + q) * Inner + c] = valid ? table[(a * Extent + index) * Inner + c] : 0;
    }
}

template <int64_t Outer, int64_t Count, int64_t Extent, int64_t Inner, typename T, typename I>
static inline void sinter_scatter_add(const T *table, const I *indices, const T *values, T *out) {
  for (int64_t i = 0; i < Outer * Extent * Inner; ++i)
    out[i] = table[i];
  for (int64_t a = 0; a < Outer; ++a)
    for (int64_t q = 0; q < Count; ++q) {
      const int64_t index = static_cast<int64_t>(indices[q]);
      if (index < 0 || index >= Extent)
        continue;
      for (int64_t c = 0; c < Inner; ++c)
        out[(a * Extent + index) * Inner + c] += values[(a * Count + q) * Inner + c];
    }
}

#endif // SINTER_KERNELS_CPU_GATHER_H
