//===- HostCompiler.cpp - C++ kernels into shared libraries, cached --------===//
#include "sinter/Codegen/HostCompiler.h"

#include "sinter/runtime/Simt.h"

#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Nvrtc.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unistd.h>
#include <vector>

#ifndef SINTER_KERNELS_INCLUDE_DIR
#error "SINTER_KERNELS_INCLUDE_DIR must name the kernels/ directory"
#endif

namespace sinter::codegen {
namespace {

/// The host C++ compiler's path (CXX, or c++ on PATH), or empty with the
/// reason and the fix in `error`.
std::string compilerPath(std::string &error) {
  const std::string &cxx = runtime::environment().cxx;
  bool given = !cxx.empty();
  std::string name = given ? cxx : "c++";
  std::string path = name;
  if (!llvm::sys::path::is_absolute(name)) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name);
    path = found ? *found : std::string();
  }
  if (!path.empty() && llvm::sys::fs::can_execute(path))
    return path;
  error = given ? "no host C++ compiler: CXX is '" + name +
                      "', which is not an executable program; set CXX to a C++ compiler "
                      "(g++ or clang++) or unset it to use c++ from PATH"
                : std::string("no host C++ compiler: c++ is not on PATH; install g++ "
                              "(apt-get install g++) or set CXX to a C++ compiler");
  return std::string();
}

/// Runs `args`, returning its exit code and stdout+stderr in `output`.
int run(llvm::ArrayRef<llvm::StringRef> args, std::string &output) {
  llvm::SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("sinter-cc", "log", log);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string message;
  int code = llvm::sys::ExecuteAndWait(args[0], args, std::nullopt, redirects, 0, 0, &message);
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    output = (*buffer)->getBuffer().str() + message;
  llvm::sys::fs::remove(log);
  return code;
}

/// The compiler's first line of --version (part of the cache key), per
/// compiler path.
std::string compilerVersion(const std::string &compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = versions.try_emplace(compiler);
  if (inserted) {
    std::string output;
    it->second = run({compiler, "--version"}, output) == 0 ? output.substr(0, output.find('\n'))
                                                           : std::string("unknown");
  }
  return it->second;
}

} // namespace

/// Note [Finding the kernel helpers]
/// Generated kernels include Sinter's kernel helpers (kernels/cpu/, kernels/common/). A
/// Sinter installed as a package has them under <prefix>/include/sinter/kernels,
/// next to <prefix>/lib with the compiler library; a build tree has them in
/// the source tree it was built from. SINTER_KERNELS_DIR names another folder.
const std::string &kernelsIncludeDir() {
  static const std::string *dir = [] {
    auto has = [](const std::string &candidate) {
      return llvm::sys::fs::exists(candidate + "/cpu/kernel.h") &&
             llvm::sys::fs::exists(candidate + "/common/philox.h");
    };
    if (const std::string &env = runtime::environment().kernels_dir; !env.empty())
      return new std::string(env);
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&kernelsIncludeDir), &info) != 0 &&
        info.dli_fname != nullptr) {
      llvm::SmallString<256> installed(llvm::sys::path::parent_path(info.dli_fname));
      llvm::sys::path::append(installed, "..", "include", "sinter", "kernels");
      if (has(installed.str().str()))
        return new std::string(installed.str().str());
    }
    return new std::string(SINTER_KERNELS_INCLUDE_DIR);
  }();
  return *dir;
}

namespace {

/// The helpers generated kernels include (every file of kernels/cpu/ and
/// kernels/common/, by name): part of the cache key.
std::string includedHeaders(bool cuda) {
  std::vector<std::string> files;
  std::vector<const char *> folders = {"/cpu", "/common"};
  if (cuda)
    folders.push_back("/cuda");
  for (const char *folder : folders) {
    std::error_code error;
    for (llvm::sys::fs::directory_iterator it(kernelsIncludeDir() + folder, error), end;
         it != end && !error; it.increment(error))
      if (it->type() == llvm::sys::fs::file_type::regular_file)
        files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::string text;
  for (const std::string &file : files)
    if (auto buffer = llvm::MemoryBuffer::getFile(file))
      text += llvm::sys::path::filename(file).str() + "\n" + (*buffer)->getBuffer().str();
  return text;
}

// -fwrapv: integer overflow wraps, as in the reference executor and on GPUs.
// -fopenmp: large loops run on every core (OMP_NUM_THREADS to limit).
// -march=native: the loops vectorise for this machine's vector units (the
// cache key names the host CPU and its features). -std=c++17 (not gnu++17)
// keeps floating-point contraction off: no FMA changes a rounding.
// -fno-math-errno and -fno-trapping-math change no result; they let loops
// that call sqrt or exp vectorise (with glibc's libmvec).
const char *const kFlags[] = {
    "-O3",      "-march=native",   "-std=c++17",         "-shared", "-fPIC", "-fwrapv",
    "-fopenmp", "-fno-math-errno", "-fno-trapping-math", "-w"};

#ifndef SINTER_KERNEL_SANITIZE
#define SINTER_KERNEL_SANITIZE ""
#endif

/// kFlags, and in a sanitized build (-DSINTER_SANITIZE=...) the same
/// sanitizers as the process that loads the kernels: a kernel that reads past
/// its buffers is reported like the tools' own code. The flags are part of the
/// cache key, so sanitized and plain kernels never serve each other.
const std::vector<std::string> &compileFlags() {
  static const std::vector<std::string> flags = [] {
    std::vector<std::string> all(std::begin(kFlags), std::end(kFlags));
    if (*SINTER_KERNEL_SANITIZE != '\0')
      all.insert(all.end(), {std::string("-fsanitize=") + SINTER_KERNEL_SANITIZE,
                             "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g1"});
    return all;
  }();
  return flags;
}

/// The host CPU and its features: kernels built with -march=native for one
/// CPU must not be served to another from a shared cache.
std::string hostCpu() {
  std::string cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> on;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      on.push_back(feature.first().str());
  std::sort(on.begin(), on.end());
  for (const std::string &f : on)
    cpu += "," + f;
  return cpu;
}

} // namespace

namespace {
std::mutex cacheDirMutex;
std::string &cacheDirOverride() { // setKernelCacheDir's folder; "" when none
  static auto *dir = new std::string();
  return *dir;
}
} // namespace

void setKernelCacheDir(const std::string &dir) {
  std::lock_guard<std::mutex> lock(cacheDirMutex);
  cacheDirOverride() = dir;
}

std::string kernelCacheDir() {
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(cacheDirMutex);
    dir = cacheDirOverride();
  }
  if (dir.empty())
    dir = runtime::environment().cache_dir;
  if (!dir.empty())
    return dir + "/kernels";
  llvm::SmallString<128> home;
  if (!llvm::sys::path::home_directory(home))
    home = llvm::sys::path::get_separator().str() + std::string("tmp");
  llvm::sys::path::append(home, ".cache", "sinter", "kernels");
  return std::string(home);
}

/// Note [A kernel cache that survives crashes]
/// A cache entry is `kernel-<key>.so` and, beside it, an empty marker
/// `kernel-<key>.<checksum>.ok` that names the xxh3 checksum of the
/// library's bytes. A compile writes the library under a temporary name,
/// fsyncs it, creates the marker, renames the library into place and
/// fsyncs the folder, so that a crash or a full disk leaves no entry, or a
/// temporary, but never a half-written library under the entry's name.
/// A hit is verified: its checksum must have a marker (a truncated or
/// otherwise damaged file has none) and, for this machine's kernels, it
/// must load (dlopen: a library of another libc does not); a damaged entry
/// is said once and built again. Concurrent compiles of one key each leave
/// their own marker, so whichever library wins the rename is verified. An
/// entry without any marker (from before markers) is rebuilt silently.
/// Temporaries of compiles killed more than an hour ago are removed the
/// first time a process compiles into the folder.
namespace {

constexpr const char *kNoChecksum = "has no checksum";

std::string markerPath(const std::string &dir, const std::string &hash, const std::string &sum) {
  return dir + "/kernel-" + hash + "." + sum + ".ok";
}

std::optional<std::string> checksumOf(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bytes)
    return std::nullopt;
  llvm::StringRef data = (*bytes)->getBuffer();
  return llvm::utohexstr(llvm::xxh3_64bits(llvm::arrayRefFromStringRef(data)),
                         /*LowerCase=*/true) +
         "-" + std::to_string(data.size());
}

/// fsync of a file or a folder.
bool syncFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

bool createMarker(const std::string &path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

/// Every marker of `hash`'s entry.
std::vector<std::string> markersOf(const std::string &dir, const std::string &hash) {
  std::vector<std::string> markers;
  std::error_code ec;
  std::string prefix = "kernel-" + hash + ".";
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(prefix) && name.ends_with(".ok"))
      markers.push_back(it->path());
  }
  return markers;
}

/// What is wrong with the entry at `path` ("" when nothing).
std::string checkEntry(const std::string &dir, const std::string &hash, const std::string &path,
                       bool load) {
  std::optional<std::string> sum = checksumOf(path);
  if (!sum)
    return "cannot be read";
  if (!llvm::sys::fs::exists(markerPath(dir, hash, *sum)))
    return markersOf(dir, hash).empty() ? kNoChecksum
                                        : "does not match its checksum (truncated or damaged)";
  if (load) {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const char *why = dlerror();
      return std::string("cannot be loaded (") + (why ? why : "dlopen failed") + ")";
    }
    dlclose(handle);
  }
  return "";
}

void removeEntry(const std::string &dir, const std::string &hash, const std::string &path) {
  llvm::sys::fs::remove(path);
  for (const std::string &marker : markersOf(dir, hash))
    llvm::sys::fs::remove(marker);
}

/// Removes the sources and libraries that compiles killed more than an
/// hour ago left under temporary names, once per folder and process.
void sweepTemporaries(const std::string &dir) {
  static std::mutex mutex;
  static std::set<std::string> swept;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!swept.insert(dir).second)
      return;
  }
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    bool temporary =
        name.starts_with("kernel-") &&
        (name.ends_with(".so.tmp") || name.ends_with(".cubin.tmp") || name.ends_with(".ptx.tmp") ||
         (name.ends_with(".cpp") && name.count('-') == 2));
    llvm::sys::fs::file_status status;
    if (!temporary || llvm::sys::fs::status(it->path(), status))
      continue;
    if (now - status.getLastModificationTime() > std::chrono::hours(1))
      llvm::sys::fs::remove(it->path());
  }
}

/// Whether the entry `hash` at `path` is there and sound (loadable, with
/// `load`); a damaged entry is said and removed.
bool cached(const std::string &dir, const std::string &hash, const std::string &path, bool load) {
  if (!llvm::sys::fs::exists(path))
    return false;
  std::string damage = checkEntry(dir, hash, path, load);
  if (damage.empty())
    return true;
  if (damage != kNoChecksum)
    llvm::errs() << "sinter: the kernel cache entry " << path << " " << damage
                 << "; building it again\n";
  removeEntry(dir, hash, path);
  return false;
}

/// The cache's folder made, and old temporaries swept.
bool prepareCache(const std::string &dir, std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create the kernel cache " + dir + ": " + ec.message();
    return false;
  }
  sweepTemporaries(dir);
  return true;
}

/// The finished `temporary` on disk, then its checksum's marker, then the
/// file in place at `path` (Note [A kernel cache that survives crashes]).
bool publish(const std::string &dir, const std::string &hash, const std::string &temporary,
             const std::string &path, std::string &error) {
  std::optional<std::string> sum = checksumOf(temporary);
  if (!sum || !syncFile(temporary) || !createMarker(markerPath(dir, hash, *sum))) {
    error = "cannot write the compiled kernel " + temporary + " to disk";
    llvm::sys::fs::remove(temporary);
    return false;
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    error = "cannot move the compiled kernel into the cache: " + ec.message();
    return false;
  }
  syncFile(dir);
  return true;
}

} // namespace

std::vector<std::pair<std::string, std::string>> kernelLibraryDependencies() {
  // oneDNN's soname from the library linked ("libdnnl.so.2.6" -> libdnnl.so.2,
  // Debian's libdnnl2); OpenBLAS's OpenMP build (found by the library's
  // RUNPATH, Debian's fixed folder for it); OpenMP, libmvec, the C++ and C
  // libraries.
  std::string dnnl = llvm::sys::path::filename(SINTER_DNNL_LIBRARY).str();
  size_t so = dnnl.find(".so.");
  std::string major = so == std::string::npos ? "" : dnnl.substr(so + 4);
  major = major.substr(0, major.find('.'));
  std::vector<std::pair<std::string, std::string>> libraries = {
      {"libdnnl.so." + major, "libdnnl" + major},
      {"libopenblas.so.0", "libopenblas0-openmp"},
      {"libgomp.so.1", "libgomp1"},
      {"libmvec.so.1", "libc6"},
      {"libstdc++.so.6", "libstdc++6"},
      {"libm.so.6", "libc6"},
      {"libc.so.6", "libc6"},
      {"libgcc_s.so.1", "libgcc-s1"}};
  // A sanitized build's kernels carry GCC 12's sanitizer runtimes.
  std::string sanitize = SINTER_KERNEL_SANITIZE;
  if (sanitize.find("address") != std::string::npos)
    libraries.push_back({"libasan.so.8", "libasan8"});
  if (sanitize.find("undefined") != std::string::npos)
    libraries.push_back({"libubsan.so.1", "libubsan1"});
  if (sanitize.find("thread") != std::string::npos)
    libraries.push_back({"libtsan.so.2", "libtsan2"});
  return libraries;
}

/// Where the runtime's headers are (sinter/runtime/Simt.h, which the SIMT
/// prelude includes), as Note [Finding the kernel helpers] finds the kernel
/// helpers: <prefix>/include beside the library, else the source tree's.
const std::string &runtimeIncludeDir() {
  static const std::string *dir = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&runtimeIncludeDir), &info) != 0 &&
        info.dli_fname != nullptr) {
      llvm::SmallString<256> installed(llvm::sys::path::parent_path(info.dli_fname));
      llvm::sys::path::append(installed, "..", "include");
      if (llvm::sys::fs::exists(installed + "/sinter/runtime/Simt.h"))
        return new std::string(installed.str().str());
    }
    return new std::string(SINTER_RUNTIME_INCLUDE_DIR);
  }();
  return *dir;
}

/// The simulator's library, which a simulated module links (its
/// sinter::simt::launch, found where this process loaded it).
const std::string &simulatorLibrary() {
  static const std::string *path = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&simt::syncthreads), &info) != 0 &&
        info.dli_fname != nullptr)
      return new std::string(info.dli_fname);
    return new std::string();
  }();
  return *path;
}

bool compileHostLibrary(const std::string &source, CompiledLibrary &library, std::string &error,
                        const std::string &cpu) {
  return compileHostLibrary(source, library, error, HostBuild{cpu, false});
}

bool compileHostLibrary(const std::string &source, CompiledLibrary &library, std::string &error,
                        const HostBuild &build) {
  const std::string &cpu = build.cpu;
  if (cpu != "native" && cpu != "x86-64" && cpu != "x86-64-v2" && cpu != "x86-64-v3" &&
      cpu != "x86-64-v4") {
    error = "the CPU to build kernels for is '" + cpu +
            "', not one of native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4";
    return false;
  }
  std::string compiler = compilerPath(error);
  if (compiler.empty())
    return false;
  std::vector<std::string> flags = compileFlags();
  for (std::string &flag : flags)
    if (flag == "-march=native")
      flag = "-march=" + cpu;
  std::vector<std::string> extra;
  if (build.simulatedCuda) {
    if (simulatorLibrary().empty()) {
      error = "the CUDA simulator's library (libsinter_cuda_simulator) is not loaded";
      return false;
    }
    for (std::string &flag : flags)
      if (flag == "-std=c++17")
        flag = "-std=c++20";
    flags.push_back("-DSINTER_SIMULATED");
    extra = {"-I" + runtimeIncludeDir(), simulatorLibrary(),
             "-Wl,-rpath," + llvm::sys::path::parent_path(simulatorLibrary()).str()};
  }
  static const std::string host = hostCpu();
  std::string key = source + "\n" + compiler + "\n" + compilerVersion(compiler) + "\n" +
                    includedHeaders(build.simulatedCuda) + "\n" + host +
                    "\n" SINTER_DNNL_LIBRARY "\n" SINTER_OPENBLAS_LIBRARY;
  for (const std::string &flag : flags)
    key += flag;
  for (const std::string &flag : extra)
    key += flag;
  std::string hash = llvm::utohexstr(llvm::xxh3_64bits(key), /*LowerCase=*/true);
  std::string dir = kernelCacheDir();
  std::string path = dir + "/kernel-" + hash + ".so";
  if (cached(dir, hash, path, build.cpu == "native")) {
    library = {path, true};
    return true;
  }
  if (!prepareCache(dir, error))
    return false;
  // Source and library go to unique temporary names, and the library is
  // renamed into place: concurrent compilations (threads or processes) never
  // read or serve a half-written file.
  llvm::SmallString<128> sourcePath, temporary;
  int sourceFd = -1, outputFd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          dir + "/kernel-" + hash + "-%%%%%%%%.cpp", sourceFd, sourcePath)) {
    error = "cannot write a kernel source in " + dir + ": " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream out(sourceFd, /*shouldClose=*/true);
    out << source;
  }
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          dir + "/kernel-" + hash + "-%%%%%%%%.so.tmp", outputFd, temporary)) {
    error = "cannot create a temporary library in " + dir + ": " + ec.message();
    return false;
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(outputFd);
  llvm::SmallVector<llvm::StringRef> args = {compiler};
  for (const std::string &flag : flags)
    args.push_back(flag);
  std::string include = "-I" + kernelsIncludeDir();
  // OpenBLAS's OpenMP build by path, and found there at load time too (the
  // generic libopenblas.so.0 may be its pthread build).
  args.append({include, "-I" SINTER_OPENBLAS_INCLUDE_DIR, sourcePath.str(), "-o", temporary.str(),
               SINTER_DNNL_LIBRARY, SINTER_OPENBLAS_LIBRARY, "-Wl,-rpath," SINTER_OPENBLAS_DIR,
               "-lmvec", "-lm"});
  for (const std::string &flag : extra)
    args.push_back(flag);
  std::string output;
  if (run(args, output) != 0) {
    error = "the host compiler failed on " + sourcePath.str().str() + ":\n" + output;
    llvm::sys::fs::remove(temporary);
    return false;
  }
  llvm::sys::fs::remove(sourcePath);
  if (!publish(dir, hash, temporary.str().str(), path, error))
    return false;
  library = {path, false};
  return true;
}

bool compileCudaModule(const std::string &source, int arch, CompiledLibrary &module,
                       std::string &error, bool ptx) {
  if (arch < 50 || arch > 199) {
    error = "the GPU architecture to build kernels for is " + std::to_string(arch) +
            ", not a compute capability NVRTC knows (sm_80 is 80, sm_90 is 90)";
    return false;
  }
  StatusOr<std::string> version = cuda::nvrtcVersion();
  if (!version.ok()) {
    error = std::string(version.status().message());
    return false;
  }
  const std::string kind = ptx ? "ptx" : "cubin";
  std::string key = source + "\nnvrtc " + *version + "\n" + kind + " " + std::to_string(arch) +
                    "\n" + includedHeaders(true);
  std::string hash = llvm::utohexstr(llvm::xxh3_64bits(key), /*LowerCase=*/true);
  std::string dir = kernelCacheDir();
  std::string path = dir + "/kernel-" + hash + "." + kind;
  if (cached(dir, hash, path, /*load=*/false)) {
    module = {path, true};
    return true;
  }
  if (!prepareCache(dir, error))
    return false;
  StatusOr<std::string> cubin =
      cuda::compileWithNvrtc({.path = "kernel-" + hash + ".cu",
                              .source = source,
                              .arch = std::to_string(arch),
                              .output = ptx ? cuda::NvrtcOutput::Ptx : cuda::NvrtcOutput::Cubin,
                              .includeDirs = {kernelsIncludeDir()}});
  if (!cubin.ok()) {
    error = std::string(cubin.status().message());
    return false;
  }
  llvm::SmallString<128> temporary;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          dir + "/kernel-" + hash + "-%%%%%%%%." + kind + ".tmp", fd, temporary)) {
    error = "cannot create a temporary module in " + dir + ": " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << *cubin;
  }
  if (!publish(dir, hash, temporary.str().str(), path, error))
    return false;
  module = {path, false};
  return true;
}

} // namespace sinter::codegen
