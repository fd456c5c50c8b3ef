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

namespace sinter::codegen {

struct CompiledLibrary {
  std::string path; // the shared library
  bool cacheHit = false;
};

/// Compiles `source` into a shared library (or finds it in the cache).
/// Returns false with the compiler's messages in `error` on failure.
bool compileHostLibrary(const std::string &source, CompiledLibrary &library, std::string &error);

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
