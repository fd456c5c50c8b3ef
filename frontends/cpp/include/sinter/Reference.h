//===- Reference.h - controls of the reference executor -------------------===//
//
// The reference executor runs lazy graphs with plain loops on the CPU; it is
// the oracle faster paths are checked against. These controls are for tests.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_REFERENCE_H
#define SINTER_REFERENCE_H

#include <cstdint>

namespace sinter::reference {

/// While alive, the reference executor keeps f32 results in double precision
/// instead of rounding them to float, for finite-difference gradient checks.
/// Tensors computed meanwhile keep their double values.
class HighPrecisionGuard {
public:
  HighPrecisionGuard();
  ~HighPrecisionGuard();
  HighPrecisionGuard(const HighPrecisionGuard &) = delete;
  HighPrecisionGuard &operator=(const HighPrecisionGuard &) = delete;

private:
  bool previous_;
};

/// While alive (on this thread), reading a pending tensor's values
/// (to_vector, item, printing) computes them on the reference executor even
/// when the compiler is installed and enabled: the oracle that compiled and
/// eager results are checked against.
class ReferenceGuard {
public:
  ReferenceGuard();
  ~ReferenceGuard();
  ReferenceGuard(const ReferenceGuard &) = delete;
  ReferenceGuard &operator=(const ReferenceGuard &) = delete;

private:
  bool previous_;
};

/// The number of lazy-graph nodes alive now, for tests that check a
/// training loop does not keep earlier steps' graphs alive.
int64_t live_node_count();

} // namespace sinter::reference

#endif // SINTER_REFERENCE_H
