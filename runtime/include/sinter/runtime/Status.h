//===- Status.h - the runtime's error values ------------------------------===//
//
// The runtime never throws and never exits on bad input: every fallible call
// returns Status or StatusOr<T> (Abseil's, which callers may already know).
// Errors that come from a native library are converted at the call site, with
// the file and line of that call, by one macro per library (see
// SINTER_CUDA_RETURN_IF_ERROR in CudaDriver.h).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_STATUS_H
#define SINTER_RUNTIME_STATUS_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <string_view>

namespace sinter {

using Status = absl::Status;
template <typename T> using StatusOr = absl::StatusOr<T>;

/// Returns `status` with "file:line: " put in front of its message, so that a
/// message built deep in the runtime still says where it was raised. An OK
/// status is returned unchanged.
Status withLocation(Status status, std::string_view file, int line);

} // namespace sinter

#define SINTER_STATUS_CONCAT_INNER(a, b) a##b
#define SINTER_STATUS_CONCAT(a, b) SINTER_STATUS_CONCAT_INNER(a, b)

/// Evaluates `expr` (a Status); returns it from the enclosing function if it is
/// not OK.
#define SINTER_RETURN_IF_ERROR(expr)                                                               \
  do {                                                                                             \
    ::sinter::Status sinter_status_ = (expr);                                                      \
    if (!sinter_status_.ok())                                                                      \
      return sinter_status_;                                                                       \
  } while (false)

/// `SINTER_ASSIGN_OR_RETURN(auto x, f())` declares `x` from the StatusOr `f()`
/// or returns its error from the enclosing function.
#define SINTER_ASSIGN_OR_RETURN(lhs, expr)                                                         \
  SINTER_ASSIGN_OR_RETURN_IMPL(SINTER_STATUS_CONCAT(sinter_statusor_, __LINE__), lhs, expr)
#define SINTER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                                               \
  auto tmp = (expr);                                                                               \
  if (!tmp.ok())                                                                                   \
    return std::move(tmp).status();                                                                \
  lhs = std::move(tmp).value()

#endif // SINTER_RUNTIME_STATUS_H
