//===- Reference.h - controls of the reference executor -------------------===//
//
// The reference executor runs lazy graphs with plain loops on the CPU; it is
// the oracle faster paths are checked against. These controls are for tests.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_REFERENCE_H
#define SINTER_REFERENCE_H

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

} // namespace sinter::reference

#endif // SINTER_REFERENCE_H
