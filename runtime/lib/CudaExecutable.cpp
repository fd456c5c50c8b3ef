//===- CudaExecutable.cpp - a Program on a CUDA device --------------------===//
//
// See Note [The CUDA device interface] in sinter/runtime/CudaExecutable.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/CudaExecutable.h"

#include "OpenMp.h"

#include "absl/strings/str_cat.h"

namespace sinter::runtime {

namespace {

/// Device memory given back when the run ends, however it ends.
class DeviceBlocks {
public:
  explicit DeviceBlocks(CudaDevice &device) : device_(device) {}
  DeviceBlocks(const DeviceBlocks &) = delete;
  DeviceBlocks &operator=(const DeviceBlocks &) = delete;
  ~DeviceBlocks() {
    for (void *block : blocks_)
      device_.deallocate(block);
  }
  StatusOr<uint8_t *> allocate(int64_t bytes, const std::string &what) {
    StatusOr<void *> block = device_.allocate(bytes);
    if (!block.ok())
      return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", what, " (", bytes,
                                                       " bytes) on ", device_.device().name(), ": ",
                                                       block.status().message()));
    blocks_.push_back(*block);
    return static_cast<uint8_t *>(*block);
  }

private:
  CudaDevice &device_;
  std::vector<void *> blocks_;
};

} // namespace

StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::load(Program program,
                                                               CudaDevice &device) {
  if (program.inArena.empty())
    program.inArena.assign(program.results.size(), false);
  SINTER_RETURN_IF_ERROR(validateProgram(program));
  // The simulator's module carries the host's GEMM, which loads OpenMP.
  prepareOpenMp();
  std::unique_ptr<CudaExecutable> executable(new CudaExecutable(std::move(program), device));
  const Program &p = executable->program_;
  StatusOr<std::unique_ptr<CudaModule>> module = device.load(p.library);
  if (!module.ok())
    return absl::FailedPreconditionError(absl::StrCat("cannot load the kernel library ", p.library,
                                                      " on ", device.device().name(), ": ",
                                                      module.status().message()));
  executable->module_ = std::move(*module);
  for (const Program::Step &step : p.steps) {
    if (step.collective())
      return absl::UnimplementedError(absl::StrCat(
          "the step communicates between ranks (", describeLaunch(step),
          "): collectives between CUDA devices come with NCCL, which this build does not use "
          "yet; run data-parallel steps on CPU processes (Gloo)"));
    if (step.kind != Program::Step::Kind::Kernel)
      continue;
    if (static_cast<size_t>(step.kernel) >= executable->functions_.size())
      executable->functions_.resize(step.kernel + 1, -1);
    int &function = executable->functions_[step.kernel];
    if (function >= 0)
      continue;
    std::string name = absl::StrCat(p.kernelPrefix, step.kernel);
    StatusOr<int> found = executable->module_->function(name);
    if (!found.ok())
      return absl::FailedPreconditionError(
          absl::StrCat("the kernel library ", p.library, " has no kernel ", name));
    function = *found;
  }
  return executable;
}

Status CudaExecutable::runOnDevice(const std::vector<const void *> &arguments,
                                   const std::vector<void *> &results) {
  const Program &p = program_;
  if (arguments.size() != p.arguments.size())
    return absl::InvalidArgumentError(
        absl::StrCat("the step takes ", p.arguments.size(), " arguments, got ", arguments.size()));
  if (results.size() != p.results.size())
    return absl::InvalidArgumentError(absl::StrCat("the step returns ", p.results.size(),
                                                   " results, got room for ", results.size()));
  DeviceBlocks blocks(device_);
  std::vector<uint8_t *> at(p.buffers.size(), nullptr);
  if (p.arenaBytes > 0) {
    StatusOr<uint8_t *> arena = blocks.allocate(p.arenaBytes, "the step's arena");
    if (!arena.ok())
      return arena.status();
    for (size_t b = 0; b < at.size(); ++b)
      if (p.buffers[b].offset >= 0)
        at[b] = *arena + p.buffers[b].offset;
  }
  // The kernels write a donated argument's memory: it is its result's.
  for (size_t i = 0; i < arguments.size(); ++i)
    at[p.arguments[i]] = static_cast<uint8_t *>(const_cast<void *>(arguments[i]));
  // A result outside the arena is written where the caller wants it; one
  // in the arena, or one a Copy step writes, is copied there.
  std::vector<bool> copied(results.size(), false);
  for (const Program::Step &step : p.steps)
    if (step.kind == Program::Step::Kind::Copy)
      copied[step.result] = true;
  for (size_t r = 0; r < results.size(); ++r)
    if (at[p.results[r]] == nullptr && !copied[r])
      at[p.results[r]] = static_cast<uint8_t *>(results[r]);
  std::vector<void *> parameters;
  size_t launchIndex = 0, launchCount = launchesOf(p).size();
  for (const Program::Step &step : p.steps) {
    switch (step.kind) {
    case Program::Step::Kind::Fill:
      SINTER_RETURN_IF_ERROR(
          device_.fill(at[step.outputs[0]], bytesOf(step.outputs[0]), step.element));
      continue;
    case Program::Step::Kind::Copy:
      SINTER_RETURN_IF_ERROR(
          device_.copyOnDevice(results[step.result], at[step.inputs[0]], bytesOf(step.inputs[0])));
      continue;
    case Program::Step::Kind::AllReduce: // refused by load
    case Program::Step::Kind::AllReduceDone:
    case Program::Step::Kind::ReduceScatter:
    case Program::Step::Kind::AllGather:
    case Program::Step::Kind::Kernel:
    case Program::Step::Kind::Gemm:
      break;
    }
    parameters.clear();
    for (size_t j = 0; j < step.inputs.size(); ++j)
      parameters.push_back(at[step.inputs[j]] +
                           (step.inputOffsets.empty() ? 0 : step.inputOffsets[j]));
    for (int b : step.outputs)
      parameters.push_back(at[b]);
    Status status =
        step.kind == Program::Step::Kind::Gemm
            ? module_->gemm(step.gemm, static_cast<const float *>(parameters[0]),
                            static_cast<const float *>(parameters[1]),
                            static_cast<float *>(parameters[step.inputs.size()]),
                            step.inputs.size() > 2 ? static_cast<const float *>(parameters[2])
                                                   : nullptr)
            : module_->launch(functions_[step.kernel], step.shape, parameters);
    if (!status.ok())
      return Status(status.code(), absl::StrCat("launch ", launchIndex, " of ", launchCount, " (",
                                                describeLaunch(step), ") on ", device().name(),
                                                " failed: ", status.message()));
    ++launchIndex;
  }
  for (size_t r = 0; r < results.size(); ++r)
    if (at[p.results[r]] != results[r] && !copied[r])
      SINTER_RETURN_IF_ERROR(device_.copyOnDevice(results[r], at[p.results[r]], resultBytes(r)));
  // The arena goes back to the device's cache while the run may still be
  // going: whatever is given it next runs after this run (stream order).
  return absl::OkStatus();
}

Status CudaExecutable::run(const std::vector<const void *> &arguments,
                           const std::vector<void *> &results) {
  const Program &p = program_;
  if (arguments.size() != p.arguments.size() || results.size() != p.results.size())
    return runOnDevice(arguments, results); // refused there, with the counts
  DeviceBlocks blocks(device_);
  std::vector<const void *> onDevice(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    StatusOr<uint8_t *> copy = blocks.allocate(argumentBytes(i), absl::StrCat("argument ", i));
    if (!copy.ok())
      return copy.status();
    SINTER_RETURN_IF_ERROR(device_.copyToDevice(*copy, arguments[i], argumentBytes(i)));
    onDevice[i] = *copy;
  }
  std::vector<void *> resultsOnDevice(results.size());
  for (size_t r = 0; r < results.size(); ++r) {
    if (p.donors[r] >= 0) {
      resultsOnDevice[r] = const_cast<void *>(onDevice[p.donors[r]]);
      continue;
    }
    StatusOr<uint8_t *> memory = blocks.allocate(resultBytes(r), absl::StrCat("result ", r));
    if (!memory.ok())
      return memory.status();
    resultsOnDevice[r] = *memory;
  }
  SINTER_RETURN_IF_ERROR(runOnDevice(onDevice, resultsOnDevice));
  for (size_t r = 0; r < results.size(); ++r)
    SINTER_RETURN_IF_ERROR(device_.copyToHost(results[r], resultsOnDevice[r], resultBytes(r)));
  return absl::OkStatus();
}

} // namespace sinter::runtime
