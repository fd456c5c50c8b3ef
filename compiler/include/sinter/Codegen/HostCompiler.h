//===- HostCompiler.h - C++ kernels into shared libraries, cached -*- C++ -*-===//
//
// Generated C++ is compiled by the host compiler (CXX, or c++) into a shared
// library and cached on disk under SINTER_CACHE_DIR (default
// ~/.cache/sinter/kernels), keyed by a hash of the source, the flags and the
// compiler's version: a kernel is compiled once per machine, not once per run.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CODEGEN_HOSTCOMPILER_H
#define SINTER_CODEGEN_HOSTCOMPILER_H

#include <string>
#include <utility>
#include <vector>

namespace sinter::codegen {

struct CompiledLibrary {
  std::string path; // the shared library
  bool cacheHit = false;
};

/// Compiles `source` into a shared library (or finds it in the cache).
/// Returns false with the compiler's messages in `error` on failure.
/// The shared libraries a kernel library links (their sonames, as its
/// NEEDED entries name them) and the Debian packages that install them:
/// what a machine that runs an artifact's kernels must have.
std::vector<std::pair<std::string, std::string>> kernelLibraryDependencies();

/// `cpu` is what the kernels are built for: "native" (-march=native, this
/// machine) or an x86-64 level ("x86-64-v3", for another machine of that
/// level: an artifact's); anything else is refused.
bool compileHostLibrary(const std::string &source, CompiledLibrary &library, std::string &error,
                        const std::string &cpu = "native");

/// How a library is built: for which CPU, and whether its source is CUDA
/// C++ built for the CUDA simulator (Note [The CUDA simulator] in
/// sinter/runtime/Simt.h): then C++20, SINTER_SIMULATED defined, the
/// runtime's headers found and libsinter_cuda_simulator linked.
struct HostBuild {
  std::string cpu = "native";
  bool simulatedCuda = false;
};
bool compileHostLibrary(const std::string &source, CompiledLibrary &library, std::string &error,
                        const HostBuild &build);

/// Compiles CUDA C++ `source` with NVRTC (opened at first use, Note [Lazy
/// NVRTC] in sinter/runtime/Nvrtc.h) into a cubin for compute capability
/// `arch` (90: sm_90), or with `ptx` into PTX for the virtual architecture
/// (compute_90, which the driver compiles for any GPU of that capability or
/// later), or finds it in the kernel cache: `kernel-<key>.cubin` or `.ptx`,
/// keyed by the source, NVRTC's version, the architecture and the kernel
/// helpers, kept as host libraries are (Note [A kernel cache that survives
/// crashes] in HostCompiler.cpp). False with NVRTC's log in `error`.
bool compileCudaModule(const std::string &source, int arch, CompiledLibrary &module,
                       std::string &error, bool ptx = false);

/// The kernel cache directory in use: setKernelCacheDir's folder, else
/// SINTER_CACHE_DIR's, else ~/.cache/sinter; with /kernels appended.
std::string kernelCacheDir();

/// Makes `dir` the cache's folder for the rest of the process (for a tool or
/// a test that wants its own; "" goes back to the environment's).
void setKernelCacheDir(const std::string &dir);

/// The folder of kernel helpers generated kernels include (Note [Finding the
/// kernel helpers] in HostCompiler.cpp).
const std::string &kernelsIncludeDir();

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_HOSTCOMPILER_H
