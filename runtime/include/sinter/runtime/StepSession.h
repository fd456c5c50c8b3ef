//===- StepSession.h - an exported step, run by the runtime alone -*- C++ -*-===//
//
// Note [Step sessions]
// A StepSession runs one exported Program (sinter/Aot.h) step after step
// with nothing but the runtime: it owns the step's state (every argument of
// role parameter or optimizer_state, by name), takes the batch inputs by
// name and checks them (name, byte count), computes the step scalars from
// their formulas and the random keys from their streams at its step count
// (Notes [Step scalars as formulas] and [Random keys across steps]), runs
// the step, keeps each result named as a state tensor as that tensor's new
// value (written in place when the step donates its memory), and counts the
// step. Its state loads from and saves to safetensors files by name
// (atomically; the step count in the metadata), so a checkpoint of the
// just-in-time path and one of a session are the same file.
//
// The numbers are those of the just-in-time path to the bit: the same
// Program, the same kernels, the same doubles for the scalars.
//
// Not thread-safe: one thread at a time per session (different sessions may
// run on different threads at once).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_STEPSESSION_H
#define SINTER_RUNTIME_STEPSESSION_H

#include "sinter/runtime/Program.h"
#include "sinter/runtime/Status.h"
#include "sinter/runtime/StepScalars.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::runtime {

class CudaDevice;

/// The "format" of a session's saved state: its state tensors by name, the
/// step count ("step"), and, from an artifact of a zoo model, the model
/// ("model", sinter-train's entry point), so that `sinter-train --resume`
/// continues training from it.
inline constexpr const char *kSessionCheckpointFormat = "sinter-session/1";

class StepSession {
public:
  /// Loads `program` (CpuExecutable::load: its kernel library must exist;
  /// with a `device`, a Program of the CUDA target: CudaExecutable::load on
  /// it) with `schedule` giving the learning rate of its step scalars, at
  /// step count `step`. The state starts at zero until load() or
  /// setState(). On a device, the state, the inputs and the outputs live in
  /// its memory: a run copies only the step scalars and random keys in, and
  /// the host reads the state and outputs only when asked (output(), save()).
  static StatusOr<std::unique_ptr<StepSession>>
  open(Program program, Schedule schedule, int64_t step = 0, CudaDevice *device = nullptr);
  ~StepSession();
  StepSession(const StepSession &) = delete;
  StepSession &operator=(const StepSession &) = delete;

  const Program &program() const;
  /// Optimizer steps taken (run() adds one).
  int64_t step() const { return step_; }

  /// Copies `bytes` bytes at `data` as input `name` (a batch input) for the
  /// runs that follow. Refused: a name that is no input (the inputs are
  /// named), a byte count other than the input's (its dtype and shape
  /// named).
  Status setInput(const std::string &name, const void *data, size_t bytes);
  /// Copies state tensor `name` from `data` (its whole bytes).
  Status setState(const std::string &name, const void *data, size_t bytes);
  /// The communicator the step's collectives go through from the next run
  /// on (a step exported with its gradients reduced over the ranks: each
  /// rank's session has its process group's); null: none, and such a step
  /// is refused. It must outlive the session's runs.
  void setCommunicator(Communicator *communicator) { communicator_ = communicator; }
  /// Runs one step: every batch input must have been set. The updates are
  /// written into the state's memory (Note [Donation]), so a run that fails
  /// may leave the state partly updated (its error says so): load it again.
  Status run();
  /// Copies output or state tensor `name` (after a run) into `data`.
  Status output(const std::string &name, void *data, size_t bytes) const;

  /// Loads every state tensor from the safetensors file `path` by name;
  /// the file's metadata "step", when present, becomes the step count.
  /// Refused, leaving the state as it was: a tensor the step needs that the
  /// file lacks, or holds with another shape or dtype (both named). Other
  /// tensors of the file are ignored.
  Status load(const std::string &path) { return load(std::vector<std::string>{path}); }
  /// The same from several files (an artifact's weights and optimizer
  /// state): each state tensor from the first file that holds it.
  Status load(const std::vector<std::string> &paths);
  /// Copies every state tensor this session has a namesake of (same dtype
  /// and shape) in `other`'s state: a prediction takes a training
  /// session's parameters without a file in between. Refused when there is
  /// none.
  Status copyStateFrom(const StepSession &other);
  /// Saves every state tensor to `path` atomically, with `metadata`, the
  /// step count ("step") and the format (kSessionCheckpointFormat).
  Status save(const std::string &path, const std::map<std::string, std::string> &metadata = {});

private:
  struct Impl;
  StepSession() = default;
  std::unique_ptr<Impl> impl_;
  int64_t step_ = 0;
  Communicator *communicator_ = nullptr;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_STEPSESSION_H
