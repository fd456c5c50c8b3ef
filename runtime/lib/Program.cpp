//===- Program.cpp - running a compiled step on the CPU -------------------===//
#include "sinter/runtime/Program.h"
#include "sinter/runtime/Allocator.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace sinter::runtime {
namespace {
constexpr int64_t kAlignment = 64;
int64_t alignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
} // namespace

StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::load(Program program) {
  // OpenMP's idle threads spin by default, taking the cores the caller's own
  // work between kernels needs (3x slower steps measured on 2 cores); they
  // sleep instead unless the user chose. Read once, when OpenMP first loads.
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  std::unique_ptr<CpuExecutable> executable(new CpuExecutable());
  // RTLD_NODELETE: a kernel library stays mapped after its last executable,
  // and so do the OpenMP and oneDNN runtimes it pulled in, whose worker
  // threads outlive any one library.
  executable->handle_ = dlopen(program.library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (executable->handle_ == nullptr) {
    const char *why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load the kernel library ", program.library, ": ", why ? why : "unknown reason"));
  }
  int count = 0;
  for (const Program::Launch &launch : program.launches)
    count = std::max(count, launch.kernel + 1);
  for (int k = 0; k < count; ++k) {
    std::string name = absl::StrCat(program.kernelPrefix, k);
    void *symbol = dlsym(executable->handle_, name.c_str());
    if (symbol == nullptr)
      return absl::FailedPreconditionError(
          absl::StrCat("the kernel library ", program.library, " has no kernel ", name));
    executable->kernels_.push_back(reinterpret_cast<Kernel>(symbol));
  }

  // Which buffers live outside the arena: arguments, and results that a
  // kernel writes (once: a result returned twice is copied the second time).
  size_t n = program.buffers.size();
  std::vector<bool> external(n, false), written(n, false), claimed(n, false);
  for (int b : program.arguments)
    external[b] = true;
  for (const Program::Launch &launch : program.launches)
    for (int b : launch.outputs)
      written[b] = true;
  for (int b : program.results) {
    bool inPlace = written[b] && !external[b] && !claimed[b];
    claimed[b] = claimed[b] || inPlace;
    executable->inPlace_.push_back(inPlace);
  }
  std::vector<int64_t> offset(n, -1);
  int64_t size = 0;
  for (size_t b = 0; b < n; ++b) {
    if (external[b] || claimed[b])
      continue;
    offset[b] = size;
    size += alignUp(program.buffers[b].bytes);
  }
  executable->arenaBytes_ = size;
  executable->arena_ = static_cast<uint8_t *>(HostAllocator::get().allocate(size));
  if (executable->arena_ == nullptr)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the step's arena of ", size, " bytes"));
  executable->address_.assign(n, nullptr);
  for (size_t b = 0; b < n; ++b)
    if (offset[b] >= 0)
      executable->address_[b] = executable->arena_ + offset[b];
  // Constants are filled once: no kernel writes them.
  for (const Program::Fill &fill : program.fills) {
    uint8_t *bytes = executable->address_[fill.buffer];
    int64_t total = program.buffers[fill.buffer].bytes, step = fill.element.size();
    for (int64_t at = 0; bytes != nullptr && step > 0 && at + step <= total; at += step)
      std::memcpy(bytes + at, fill.element.data(), step);
  }
  executable->program_ = std::move(program);
  return executable;
}

CpuExecutable::~CpuExecutable() {
  HostAllocator::get().deallocate(arena_, arenaBytes_);
  if (handle_ != nullptr)
    dlclose(handle_);
}

Status CpuExecutable::run(const std::vector<const void *> &arguments,
                          const std::vector<void *> &results) {
  if (arguments.size() != program_.arguments.size())
    return absl::InvalidArgumentError(absl::StrCat("the step takes ", program_.arguments.size(),
                                                   " arguments, got ", arguments.size()));
  if (results.size() != program_.results.size())
    return absl::InvalidArgumentError(absl::StrCat("the step returns ", program_.results.size(),
                                                   " results, got room for ", results.size()));
  std::vector<uint8_t *> at = address_;
  for (size_t i = 0; i < arguments.size(); ++i)
    at[program_.arguments[i]] = static_cast<uint8_t *>(const_cast<void *>(arguments[i]));
  for (size_t i = 0; i < results.size(); ++i)
    if (inPlace_[i])
      at[program_.results[i]] = static_cast<uint8_t *>(results[i]);
  std::vector<const void *> in;
  std::vector<void *> out;
  for (const Program::Launch &launch : program_.launches) {
    in.clear();
    out.clear();
    for (int b : launch.inputs)
      in.push_back(at[b]);
    for (int b : launch.outputs)
      out.push_back(at[b]);
    kernels_[launch.kernel](in.data(), out.data());
  }
  for (size_t i = 0; i < results.size(); ++i)
    if (!inPlace_[i] && bytesOf(program_.results[i]) > 0)
      std::memcpy(results[i], at[program_.results[i]], bytesOf(program_.results[i]));
  return absl::OkStatus();
}

} // namespace sinter::runtime
