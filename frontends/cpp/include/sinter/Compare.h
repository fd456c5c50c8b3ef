//===- Compare.h - one way to compare a result with its reference -*- C++ -*-===//
//
// Every test and tool that checks numbers against a reference (the
// reference executor, PyTorch, a finite difference) uses this comparison, so
// that each has the same rules and the same report (as torch.testing's
// assert_close is for PyTorch):
//   - element by element, never through a maximum that a NaN can hide in
//     (std::max(x, NaN) is x: an all-NaN result would pass);
//   - where the reference is finite, the result must be finite and within
//     the tolerance; where the reference is NaN the result must be NaN, and
//     where it is infinite the result must be the same infinity;
//   - the report names the tensor, the first element out of tolerance with
//     both values, and how many elements are out.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_COMPARE_H
#define SINTER_COMPARE_H

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace sinter {

/// How far a result may be from its reference, element k:
///   |got[k] - want[k]| <= absolute + of_largest * max|want| + of_element * |want[k]|
/// where max|want| is taken over the reference's finite elements.
struct Tolerance {
  /// A fraction of the reference's largest finite magnitude: the scale of
  /// float rounding in sums and products over the whole tensor.
  double of_largest = 0;
  /// A fraction of the element's own reference value.
  double of_element = 0;
  /// A floor (for tensors whose reference is all zeros).
  double absolute = 0;
};

/// What compare_values() found.
struct Comparison {
  bool ok = true;
  std::string name;
  size_t elements = 0;
  /// Elements out of tolerance (a non-finite result where the reference is
  /// finite counts as out).
  size_t failures = 0;
  /// The first element out of tolerance and its two values (when !ok and the
  /// sizes agree).
  size_t first_failure = 0;
  double got_at_failure = 0, want_at_failure = 0;
  /// The reference's largest finite magnitude.
  double largest = 0;
  /// The largest difference over the finite pairs, and the largest ratio of
  /// a difference to its element's tolerance (1 is at the tolerance).
  double worst_difference = 0;
  double worst_fraction = 0;
  /// One line: "TENSOR OK  name  max diff 3.1e-06 (2.4% of tolerance)" or
  /// "TENSOR FAIL  name: element 7 of 64 is nan, the reference 0.25 (...)".
  std::string message;
  explicit operator bool() const { return ok; }
};

/// Compares `got` with the reference `want` (see the rules above).
/// REQUIRES: tolerance fields are >= 0.
Comparison compare_values(std::string_view name, std::span<const double> got,
                          std::span<const double> want, const Tolerance &tolerance);
Comparison compare_values(std::string_view name, std::span<const float> got,
                          std::span<const float> want, const Tolerance &tolerance);

} // namespace sinter

#endif // SINTER_COMPARE_H
