//===- Nvrtc.cpp - NVRTC, loaded at first use -----------------------------===//
//
// See Note [Lazy NVRTC] in Nvrtc.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Nvrtc.h"

#include "sinter/runtime/Environment.h"

#include "absl/strings/str_cat.h"

#include <dlfcn.h>

#include <cstddef>
#include <mutex>

namespace sinter::cuda {
namespace {

constexpr int kNvrtcSuccess = 0;

using Program = void *; // nvrtcProgram
using VersionFn = int (*)(int *, int *);
using CreateProgramFn = int (*)(Program *, const char *, const char *, int, const char *const *,
                                const char *const *);
using CompileProgramFn = int (*)(Program, int, const char *const *);
using GetSizeFn = int (*)(Program, std::size_t *);
using GetBytesFn = int (*)(Program, char *);
using DestroyProgramFn = int (*)(Program *);
using GetErrorStringFn = const char *(*)(int);

struct Nvrtc {
  void *handle = nullptr;
  std::string library;
  VersionFn version = nullptr;
  CreateProgramFn createProgram = nullptr;
  CompileProgramFn compileProgram = nullptr;
  GetSizeFn getProgramLogSize = nullptr, getPtxSize = nullptr, getCubinSize = nullptr;
  GetBytesFn getProgramLog = nullptr, getPtx = nullptr, getCubin = nullptr;
  DestroyProgramFn destroyProgram = nullptr;
  GetErrorStringFn getErrorString = nullptr;
};

template <typename Fn> Status loadSymbol(const Nvrtc &nvrtc, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(nvrtc.handle, name));
  if (fn == nullptr)
    return absl::FailedPreconditionError(absl::StrCat("NVRTC (", nvrtc.library, ") has no symbol '",
                                                      name, "'; it is too old or not NVRTC"));
  return absl::OkStatus();
}

StatusOr<Nvrtc> openNvrtc() {
  const std::string &override = runtime::environment().nvrtc_library;
  std::vector<std::string> candidates;
  if (!override.empty())
    candidates = {override};
  else
    candidates = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                  "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12"};
  Nvrtc nvrtc;
  std::string why;
  for (const std::string &candidate : candidates) {
    nvrtc.handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (nvrtc.handle != nullptr) {
      nvrtc.library = candidate;
      break;
    }
    const char *error = dlerror();
    why += (why.empty() ? "" : "; ") +
           std::string(error != nullptr ? error : candidate + ": unknown reason");
  }
  if (nvrtc.handle == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(
        "NVRTC, which compiles the CUDA kernels, could not be loaded (", why,
        "); install the CUDA toolkit's NVRTC (NVIDIA's cuda-nvrtc package), or name the "
        "library in SINTER_NVRTC"));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcVersion", nvrtc.version));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcCreateProgram", nvrtc.createProgram));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcCompileProgram", nvrtc.compileProgram));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcGetProgramLogSize", nvrtc.getProgramLogSize));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcGetProgramLog", nvrtc.getProgramLog));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcGetPTXSize", nvrtc.getPtxSize));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcGetPTX", nvrtc.getPtx));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcGetCUBINSize", nvrtc.getCubinSize));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcGetCUBIN", nvrtc.getCubin));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcDestroyProgram", nvrtc.destroyProgram));
  SINTER_RETURN_IF_ERROR(loadSymbol(nvrtc, "nvrtcGetErrorString", nvrtc.getErrorString));
  return nvrtc;
}

/// The library, opened once per process (or why not, every time).
const StatusOr<Nvrtc> &opened() {
  static const StatusOr<Nvrtc> *nvrtc = new StatusOr<Nvrtc>(openNvrtc());
  return *nvrtc;
}

std::string errorOf(const Nvrtc &nvrtc, int code) {
  const char *text = nvrtc.getErrorString(code);
  return text != nullptr ? text : absl::StrCat("NVRTC error ", code);
}

} // namespace

StatusOr<std::string> nvrtcVersion() {
  const StatusOr<Nvrtc> &nvrtc = opened();
  SINTER_RETURN_IF_ERROR(nvrtc.status());
  int major = 0, minor = 0;
  if (int code = nvrtc->version(&major, &minor); code != kNvrtcSuccess)
    return absl::InternalError(absl::StrCat("nvrtcVersion failed: ", errorOf(*nvrtc, code)));
  return absl::StrCat(major, ".", minor);
}

StatusOr<std::string> compileWithNvrtc(const NvrtcRequest &request, std::string *log) {
  const StatusOr<Nvrtc> &opened_ = opened();
  SINTER_RETURN_IF_ERROR(opened_.status());
  const Nvrtc &nvrtc = *opened_;
  Program program = nullptr;
  if (int code = nvrtc.createProgram(&program, request.source.c_str(), request.path.c_str(), 0,
                                     nullptr, nullptr);
      code != kNvrtcSuccess)
    return absl::InternalError(
        absl::StrCat("nvrtcCreateProgram for ", request.path, " failed: ", errorOf(nvrtc, code)));
  bool cubin = request.output == NvrtcOutput::Cubin;
  std::vector<std::string> options = {
      absl::StrCat("--gpu-architecture=", cubin ? "sm_" : "compute_", request.arch), "--std=c++17"};
  for (const std::string &dir : request.includeDirs)
    options.push_back("--include-path=" + dir);
  std::vector<const char *> pointers;
  for (const std::string &option : options)
    pointers.push_back(option.c_str());
  int compiled = nvrtc.compileProgram(program, static_cast<int>(pointers.size()), pointers.data());
  std::size_t size = 0;
  std::string text;
  if (nvrtc.getProgramLogSize(program, &size) == kNvrtcSuccess && size > 0) {
    text.assign(size, '\0');
    if (nvrtc.getProgramLog(program, text.data()) != kNvrtcSuccess)
      text.clear();
    while (!text.empty() && text.back() == '\0') // the size counts the terminator
      text.pop_back();
  }
  if (log != nullptr)
    *log = text;
  std::string image;
  Status status = absl::OkStatus();
  if (compiled != kNvrtcSuccess) {
    status = absl::InvalidArgumentError(
        absl::StrCat("NVRTC could not compile ", request.path, " for ", cubin ? "sm_" : "compute_",
                     request.arch, " (", errorOf(nvrtc, compiled), "):\n", text));
  } else {
    GetSizeFn getSize = cubin ? nvrtc.getCubinSize : nvrtc.getPtxSize;
    GetBytesFn getBytes = cubin ? nvrtc.getCubin : nvrtc.getPtx;
    size = 0;
    if (int code = getSize(program, &size); code != kNvrtcSuccess) {
      status = absl::InternalError(
          absl::StrCat("NVRTC's output size for ", request.path, ": ", errorOf(nvrtc, code)));
    } else {
      image.assign(size, '\0');
      if (int code = getBytes(program, image.data()); code != kNvrtcSuccess)
        status = absl::InternalError(
            absl::StrCat("NVRTC's output for ", request.path, ": ", errorOf(nvrtc, code)));
      if (!cubin)
        while (!image.empty() && image.back() == '\0') // the size counts the terminator
          image.pop_back();
    }
  }
  nvrtc.destroyProgram(&program);
  if (!status.ok())
    return status;
  return image;
}

} // namespace sinter::cuda
