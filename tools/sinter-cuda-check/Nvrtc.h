//===- Nvrtc.h - compile CUDA C++ with NVRTC, as the GPU backend will -----===//
#ifndef SINTER_TOOLS_NVRTC_H
#define SINTER_TOOLS_NVRTC_H

#include <string>

namespace sinter::cuda {

/// What NVRTC makes of one source: PTX for a virtual architecture, or a cubin
/// (machine code) for a real one.
enum class NvrtcOutput { Ptx, Cubin };

/// Compiles `source` (named `path` in messages) with NVRTC for architecture
/// `arch` ("90"), with `includeDir` (Sinter's kernels/ helpers) on the include
/// path. On failure returns false with NVRTC's log in `log`.
bool compileWithNvrtc(const std::string &path, const std::string &source, const std::string &arch,
                      const std::string &includeDir, NvrtcOutput output, std::string &image,
                      std::string &log);

} // namespace sinter::cuda

#endif // SINTER_TOOLS_NVRTC_H
