//===- Program.cpp - running a compiled step on the CPU -------------------===//
#include "sinter/runtime/Program.h"

#include "absl/strings/str_cat.h"

#include <cstring>
#include <dlfcn.h>

namespace sinter::runtime {

StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::load(Program program) {
  std::unique_ptr<CpuExecutable> executable(new CpuExecutable());
  executable->handle_ = dlopen(program.library.c_str(), RTLD_NOW | RTLD_LOCAL);
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
  for (const Program::Buffer &buffer : program.buffers)
    executable->storage_.emplace_back(static_cast<size_t>(buffer.bytes));
  for (const Program::Fill &fill : program.fills) {
    std::vector<uint8_t> &bytes = executable->storage_[fill.buffer];
    for (size_t at = 0; at + fill.element.size() <= bytes.size(); at += fill.element.size())
      std::memcpy(bytes.data() + at, fill.element.data(), fill.element.size());
  }
  executable->program_ = std::move(program);
  return executable;
}

CpuExecutable::~CpuExecutable() {
  if (handle_ != nullptr)
    dlclose(handle_);
}

Status CpuExecutable::run(const std::vector<const void *> &arguments,
                          const std::vector<int64_t> &argumentBytes,
                          std::vector<std::vector<uint8_t>> &results,
                          const std::vector<bool> *unchanged) {
  if (arguments.size() != program_.arguments.size() ||
      argumentBytes.size() != program_.arguments.size())
    return absl::InvalidArgumentError(absl::StrCat("the step takes ", program_.arguments.size(),
                                                   " arguments, got ", arguments.size()));
  for (size_t i = 0; i < arguments.size(); ++i) {
    std::vector<uint8_t> &buffer = storage_[program_.arguments[i]];
    if (argumentBytes[i] != static_cast<int64_t>(buffer.size()))
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " has ", argumentBytes[i],
                                                     " bytes, the step expects ", buffer.size()));
    if (unchanged == nullptr || i >= unchanged->size() || !(*unchanged)[i])
      std::memcpy(buffer.data(), arguments[i], buffer.size());
  }
  std::vector<const void *> in;
  std::vector<void *> out;
  for (const Program::Launch &launch : program_.launches) {
    in.clear();
    out.clear();
    for (int b : launch.inputs)
      in.push_back(storage_[b].data());
    for (int b : launch.outputs)
      out.push_back(storage_[b].data());
    kernels_[launch.kernel](in.data(), out.data());
  }
  results.clear();
  for (int b : program_.results)
    results.push_back(storage_[b]);
  return absl::OkStatus();
}

} // namespace sinter::runtime
