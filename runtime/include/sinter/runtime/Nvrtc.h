//===- Nvrtc.h - CUDA C++ compiled at run time, NVRTC loaded at first use -===//
//
// Note [Lazy NVRTC]
// As the driver (Note [Lazy CUDA] in CudaDriver.h), NVRTC is never linked:
// libnvrtc is opened with dlopen the first time CUDA C++ is compiled
// (SINTER_NVRTC names the library; else libnvrtc.so.13, .so.12, .so on the
// loader's path, then the toolkit's folder /usr/local/cuda/lib64). Its few
// entry points are declared by hand (their C ABI is stable), so the runtime
// builds without the CUDA toolkit, every binary starts without it, and a
// compilation without it is a Status that says what to install. NVRTC needs
// no GPU: the generated kernels are compiled here for sm_80 and sm_90 and
// assembled by ptxas.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_NVRTC_H
#define SINTER_RUNTIME_NVRTC_H

#include "sinter/runtime/Status.h"

#include <string>
#include <vector>

namespace sinter::cuda {

/// What NVRTC makes of one source: PTX for a virtual architecture, or a
/// cubin (machine code) for a real one.
enum class NvrtcOutput { Ptx, Cubin };

struct NvrtcRequest {
  /// The source's name in messages and NVRTC's log.
  std::string path;
  std::string source;
  /// The architecture's number: "90" (compute_90 or sm_90).
  std::string arch;
  NvrtcOutput output = NvrtcOutput::Ptx;
  /// Folders on the include path (Sinter's kernels/ helpers).
  std::vector<std::string> includeDirs = {};
};

/// NVRTC's version ("13.0"), or why it cannot be opened.
StatusOr<std::string> nvrtcVersion();

/// Compiles `request.source`; the PTX (without its terminating NUL) or the
/// cubin. `log` receives NVRTC's log, warnings included. A compile error is
/// an InvalidArgument Status that names the file and holds the log; a
/// missing NVRTC, FailedPrecondition naming the library and the package.
StatusOr<std::string> compileWithNvrtc(const NvrtcRequest &request, std::string *log = nullptr);

} // namespace sinter::cuda

#endif // SINTER_RUNTIME_NVRTC_H
