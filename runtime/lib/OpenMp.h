//===- OpenMp.h - what the process sets before OpenMP loads --------------===//
#ifndef SINTER_RUNTIME_LIB_OPENMP_H
#define SINTER_RUNTIME_LIB_OPENMP_H

namespace sinter::runtime {

/// Sets OpenMP's spin count for idle threads unless the user set one
/// (Note [OpenMP's idle threads] in Program.cpp): before the first kernel
/// library loads, as OpenMP reads it once.
void prepareOpenMp();

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_LIB_OPENMP_H
