//===- Compare.cpp - one way to compare a result with its reference -------===//
#include "sinter/Compare.h"

#include "Format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sinter {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

template <typename T>
Comparison compareSpans(std::string_view name, std::span<const T> got, std::span<const T> want,
                        const Tolerance &tolerance) {
  Comparison c;
  c.name = std::string(name);
  c.elements = want.size();
  if (got.size() != want.size()) {
    c.ok = false;
    c.failures = want.size();
    c.message = cat("TENSOR FAIL  ", name, ": ", got.size(), " elements where the reference has ",
                    want.size());
    return c;
  }
  for (T w : want)
    if (std::isfinite(w))
      c.largest = std::max(c.largest, std::fabs(static_cast<double>(w)));
  double shared = tolerance.absolute + tolerance.of_largest * c.largest;
  auto allowedAt = [&](double w) { return shared + tolerance.of_element * std::fabs(w); };
  for (size_t k = 0; k < want.size(); ++k) {
    double g = static_cast<double>(got[k]), w = static_cast<double>(want[k]);
    bool within;
    if (std::isnan(w)) {
      within = std::isnan(g);
    } else if (std::isinf(w)) {
      within = g == w;
    } else if (!std::isfinite(g)) {
      within = false;
    } else {
      double difference = std::fabs(g - w);
      double allowed = allowedAt(w);
      c.worst_difference = std::max(c.worst_difference, difference);
      double fraction = allowed > 0 ? difference / allowed : (difference > 0 ? INFINITY : 0.0);
      c.worst_fraction = std::max(c.worst_fraction, fraction);
      within = difference <= allowed;
    }
    if (!within) {
      if (c.failures == 0) {
        c.first_failure = k;
        c.got_at_failure = g;
        c.want_at_failure = w;
      }
      ++c.failures;
    }
  }
  c.ok = c.failures == 0;
  if (c.ok) {
    char text[96];
    std::snprintf(text, sizeof text, "max diff %.2e  (%.1f%% of tolerance)", c.worst_difference,
                  100 * c.worst_fraction);
    c.message = cat("TENSOR OK  ", name, "  ", text);
  } else {
    double allowed = allowedAt(c.want_at_failure);
    c.message =
        cat("TENSOR FAIL  ", name, ": element ", c.first_failure, " of ", c.elements, " is ",
            number(c.got_at_failure), " where the reference is ", number(c.want_at_failure),
            " (allowed difference ", number(allowed), "); ", c.failures, " of ", c.elements,
            " elements out of tolerance; largest finite difference ", number(c.worst_difference),
            " for values up to ", number(c.largest));
  }
  return c;
}

} // namespace

Comparison compare_values(std::string_view name, std::span<const double> got,
                          std::span<const double> want, const Tolerance &tolerance) {
  return compareSpans(name, got, want, tolerance);
}

Comparison compare_values(std::string_view name, std::span<const float> got,
                          std::span<const float> want, const Tolerance &tolerance) {
  return compareSpans(name, got, want, tolerance);
}

} // namespace sinter
