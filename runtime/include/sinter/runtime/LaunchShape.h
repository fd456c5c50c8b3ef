//===- LaunchShape.h - the grid and block a kernel runs on -------*- C++ -*-===//
//
// Note [Launch shapes]
// A kernel's launch shape is chosen by the target that plans it (the row
// kernel's warps per row, an elementwise kernel's blocks) and travels as one
// struct: written per kernel by the target's render (RenderedKernels::shapes
// in sinter/Codegen/Target.h), copied into the Program's kernel step by
// translation (Program::Step::shape, and so into the Program file), and
// handed to the device's launch (CudaModule::launch in
// sinter/runtime/CudaExecutable.h), which checks it against CUDA's limits. The CPU runs each kernel on its OpenMP
// threads and leaves it at one block of one thread.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_LAUNCHSHAPE_H
#define SINTER_RUNTIME_LAUNCHSHAPE_H

#include "sinter/runtime/Status.h"

#include <cstdint>
#include <string>

namespace sinter::runtime {

struct LaunchShape {
  /// Blocks in the grid, per dimension (x, y, z).
  int64_t grid[3] = {1, 1, 1};
  /// Threads in a block, per dimension.
  int64_t block[3] = {1, 1, 1};
  /// Dynamic shared memory per block, in bytes.
  int64_t sharedBytes = 0;
  friend bool operator==(const LaunchShape &, const LaunchShape &) = default;
};

/// Whether CUDA takes `shape` (grid x below 2^31, y and z below 2^16; at
/// most 1024 threads a block, 1024 x 1024 x 64), else an InvalidArgument
/// Status naming `kernel` and the shape.
Status checkCudaLaunchShape(const std::string &kernel, const LaunchShape &shape);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_LAUNCHSHAPE_H
