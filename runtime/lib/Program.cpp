//===- Program.cpp - running a compiled step on the CPU -------------------===//
#include "sinter/runtime/Program.h"
#include "sinter/runtime/Allocator.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>

namespace sinter::runtime {
namespace {

/// Repeats `element` over `bytes` bytes at `to`.
void fillWith(uint8_t *to, int64_t bytes, const std::vector<uint8_t> &element) {
  int64_t step = static_cast<int64_t>(element.size());
  if (step == 0 || bytes < step)
    return;
  std::memcpy(to, element.data(), step);
  // Doubling copies: log2(n) memcpy calls instead of n.
  for (int64_t done = step; done < bytes;) {
    int64_t chunk = std::min(done, bytes - done);
    std::memcpy(to + done, to, chunk);
    done += chunk;
  }
}

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

  // Buffers without an offset are bound per run: arguments, and results
  // that kernels write in place.
  size_t n = program.buffers.size();
  std::vector<bool> bound(n, false);
  for (int b : program.arguments)
    bound[b] = true;
  for (int b : program.results) {
    bool inPlace = program.buffers[b].offset < 0 && !bound[b];
    bound[b] = bound[b] || inPlace;
    executable->inPlace_.push_back(inPlace);
  }
  for (size_t b = 0; b < n; ++b) {
    const Program::Buffer &buffer = program.buffers[b];
    if (buffer.offset < 0 ? !bound[b] : buffer.offset + buffer.bytes > program.arenaBytes)
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b, " of the program has no place: offset ", buffer.offset, ", ",
                       buffer.bytes, " bytes, arena of ", program.arenaBytes));
  }
  executable->program_ = std::move(program);
  return executable;
}

CpuExecutable::~CpuExecutable() {
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
  // The arena is taken for the run only (from the allocator's cache after
  // the first run), so an executable kept for later holds no memory.
  HostAllocator &allocator = HostAllocator::get();
  std::unique_ptr<uint8_t, std::function<void(uint8_t *)>> arena(
      static_cast<uint8_t *>(allocator.allocate(program_.arenaBytes)),
      [&](uint8_t *p) { allocator.deallocate(p, program_.arenaBytes); });
  if (arena == nullptr)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the step's arena of ", program_.arenaBytes, " bytes"));
  std::vector<uint8_t *> at(program_.buffers.size(), nullptr);
  for (size_t b = 0; b < at.size(); ++b)
    if (program_.buffers[b].offset >= 0)
      at[b] = arena.get() + program_.buffers[b].offset;
  // Constants: no kernel writes them; filled at every run, as the arena's
  // bytes are shared with other programs between runs.
  for (const Program::Fill &fill : program_.fills)
    fillWith(at[fill.buffer], program_.buffers[fill.buffer].bytes, fill.element);
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
