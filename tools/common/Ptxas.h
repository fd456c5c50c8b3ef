//===- Ptxas.h - CUDA kernels assembled by ptxas, and what they take ------===//
//
// What sinter-cuda-check and `sinter-bench --compile-only` share: ptxas run
// on PTX from NVRTC (sinter/runtime/Nvrtc.h) with its resource report (-v),
// read per kernel, and the limits a kernel must keep: no spills, at most
// 65,536 registers for a block of its threads (a multiprocessor's file on
// sm_80 and sm_90), at most 48 KiB of static shared memory.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_PTXAS_H
#define SINTER_TOOLS_PTXAS_H

#include "sinter/runtime/Status.h"

#include <string>
#include <vector>

namespace sinter::tools {

/// One kernel's resources, as ptxas -v reports them.
struct KernelResources {
  std::string kernel;
  long registers = 0, spillStores = 0, spillLoads = 0, sharedBytes = 0;
};

/// The kernels of a ptxas -v report, in its order.
std::vector<KernelResources> parsePtxasReport(const std::string &report);

/// Why `kernel` breaks a limit for blocks of `threads` threads ("" when it
/// keeps them all).
std::string resourceProblem(const KernelResources &kernel, long threads);

/// ptxas: $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas, or on PATH; ""
/// when none.
std::string findPtxas();

/// Assembles `ptx` for sm_`arch` into `cubinPath` with `ptxas` (-v when
/// `report` is wanted); ptxas's report, or an error with its output.
StatusOr<std::string> assemble(const std::string &ptxas, const std::string &ptxPath,
                               const std::string &arch, const std::string &cubinPath, bool report);

} // namespace sinter::tools

#endif // SINTER_TOOLS_PTXAS_H
