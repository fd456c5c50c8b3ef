//===- Aot.h - a recorded training step exported to run elsewhere -*- C++ -*-===//
//
// Note [Exporting a step]
// A training step recorded with the API can leave the process as a
// runtime::Program whose signature names everything it reads and writes, to
// be run by the runtime alone (sinter/runtime/StepSession.h): no frontend,
// no compiler. Whoever exports says which tensors carry over from step to
// step (parameters and optimizer state, by the names checkpoints use) and
// which are the batch; the rest of the step's data is what the frontend
// made for the step itself, each named by what it is: the optimizer's step
// scalars by their formula (Note [Step scalars as formulas]), random keys
// "random_key.<j>" with their stream across steps (Note [Random keys across
// steps]). Anything else the step reads (a tensor made outside it and named
// nowhere) is refused at the line that made it. The Program's results are
// the named outputs, then the new value of each state tensor the step
// changed, under the state's name; the old values are donated, so updates
// are written in place. A state tensor the step leaves as it is (a frozen
// weight; every one in a prediction) is not returned.
//
//   aot::StepExport exported(state, {{"input", x}, {"target", y}}, step);
//   Tensor loss = F::cross_entropy(model(x), y);   // record as usual
//   loss.backward(); optimizer.step();
//   runtime::Program program = exported.finish({{"loss", loss}});
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_AOT_H
#define SINTER_AOT_H

#include "sinter/Tensor.h"
#include "sinter/lazy/Node.h"
#include "sinter/runtime/Artifact.h"
#include "sinter/runtime/Program.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sinter::nn {
class Module;
}
namespace sinter::optim {
class Optimizer;
}

namespace sinter::aot {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// One step being recorded for export.
class StepExport {
public:
  /// Starts the recording. `state` lists the tensors that carry over from
  /// step to step by name; it is called now and again by finish(), as an
  /// optimizer replaces its state tensors. `inputs` are the batch by name.
  /// Each must be data (computed: after mark_step()). `step` is the number
  /// of optimizer steps taken before this one (the step count a session
  /// starts from). Throws sinter::Error naming the first that is not.
  StepExport(std::function<NamedTensors()> state, NamedTensors inputs, int64_t step,
             Loc loc = Loc::current());

  /// Compiles the step recorded since, whose results are `outputs` then the
  /// state's new values, into a Program with its kernel library built;
  /// nothing runs (mark_step() still runs the step here, if wanted). Throws
  /// sinter::Error when a tensor the step reads is named nowhere, when names
  /// repeat, or when the step cannot be compiled (with the reason).
  runtime::Program finish(const NamedTensors &outputs, Loc loc = Loc::current());
  /// The C++ source of the kernels finish() built.
  const std::string &source() const { return source_; }

private:
  std::string source_;
  std::function<NamedTensors()> state_;
  NamedTensors inputs_;
  int64_t step_;
  /// The data nodes the step starts from, by name.
  std::unordered_map<const lazy::Node *, std::string> stateNames_, inputNames_;
  std::vector<lazy::NodePtr> held_; // keeps those nodes alive
  uint64_t streamBefore_;
};

/// One function of an artifact: its name ("train_step", "predict"), its
/// Program (library: the built kernel library's path) and kernels' source.
struct ArtifactFunction {
  std::string name;
  runtime::Program program;
  std::string source;
  /// A CUDA function's code by architecture ("sm_90": a cubin's path,
  /// "compute_90": PTX's), the same kernels as `program.library` (built
  /// for the CUDA simulator).
  std::map<std::string, std::string> cubins = {};
};

/// What an artifact holds (Note [Artifacts] in sinter/runtime/Artifact.h).
struct ArtifactContents {
  std::vector<ArtifactFunction> functions;
  /// The parameters ("model.*") and the optimizer state ("optimizer.*").
  NamedTensors weights, optimizer_state;
  runtime::ArtifactTarget target;
  std::vector<runtime::SharedLibrary> shared_libraries;
  runtime::ArtifactOptimizer optimizer;
  uint64_t seed = 0;
  /// The optimizer steps the state has taken: the step count a session
  /// starts from (optimizer.safetensors' metadata "step").
  int64_t step = 0;
  /// The zoo model the steps are of (sinter-train's entry point), recorded so
  /// that `sinter-train --resume` takes a session's checkpoint; "" for your
  /// own step.
  std::string model;
  /// Write the kernels' source under sources/ (never compiled at load).
  bool keep_sources = false;
};

/// Writes `contents` as the artifact `dir` (NAME.sinter/): each function's
/// Program and kernel library, the weights and optimizer state, the
/// manifest with a SHA-256 per file. The folder is written beside and
/// renamed into place, so a reader never sees half of it; an existing
/// artifact there is replaced, anything else refused (the user's files are
/// left as they are). Throws sinter::Error naming the problem.
void write_artifact(const std::string &dir, const ArtifactContents &contents,
                    Loc loc = Loc::current());

/// Note [A training program, ahead of time]
/// `sinter-compile --program FILE -o DIR` runs a training program (as
/// `sinter-train` runs one) with SINTER_AOT_OUTPUT=DIR in its environment.
/// The program builds its model, optimizer and first batch as it would to
/// train, sees requested_artifact(), exports with training_artifact() and
/// write_artifact(), and exits; sinter-compile then checks the artifact and
/// prints its memory and needs (docs/AOT.md, tools/sinter-train-example).
struct ArtifactRequest {
  std::string dir;
  /// The CPU level the kernels are built for (SINTER_AOT_CPU).
  std::string cpu = "x86-64-v3";
  /// Keep the kernels' source in the artifact (SINTER_AOT_KEEP_SOURCES=1).
  bool keep_sources = false;
  /// For a step recorded on a CUDA device: the GPU architectures its
  /// kernels are built for by NVRTC, "sm_NN" (a cubin) or "compute_NN"
  /// (PTX, which the driver compiles for that capability and later ones)
  /// (SINTER_AOT_CUDA_ARCHS, comma-separated).
  std::vector<std::string> cuda_architectures = {"sm_80", "sm_90", "compute_90"};
};
/// The artifact sinter-compile asks this process for, from its
/// environment; std::nullopt when it runs to train. Throws sinter::Error
/// for an unknown CPU level.
std::optional<ArtifactRequest> requested_artifact(Loc loc = Loc::current());

/// A model's training, for an artifact of "train_step" (forward, loss,
/// backward and the optimizer's update of `batch`) and "predict".
struct TrainingExport {
  nn::Module *model = nullptr;
  /// Adam or AdamW (their step scalars are formulas of the step count),
  /// fresh or with the state of steps already taken.
  optim::Optimizer *optimizer = nullptr;
  /// The learning rate's schedule (LRScheduler::schedule()); a constant
  /// learning rate, the optimizer's, when absent.
  std::optional<runtime::Schedule> schedule = {};
  /// The train step's batch inputs by name ("input", "target"), data (after
  /// mark_step()) of the shapes every step has.
  NamedTensors batch = {};
  /// Records the forward and loss of one step on `batch` (the export
  /// records backward and optimizer.step() after it). Output "loss".
  std::function<Tensor()> loss = {};
  /// Recorded after the backward pass and before the optimizer's update,
  /// when given: a data-parallel step's gradient reduction
  /// (`[&] { distributed::reduce_gradients(model.parameters()); }`, recorded
  /// in any world, a world of one included; each rank's session runs it
  /// through its process group: docs/AOT.md, "Many processes"), or a
  /// gradient clipping.
  std::function<void()> after_backward = {};
  /// predict's inputs by name, and what it computes from them (in eval
  /// mode, without gradients). Output "logits". No predict when empty.
  NamedTensors predict_inputs = {};
  std::function<Tensor()> predict = {};
  /// The seed of the initial weights and of dropout (manual_seed's).
  uint64_t seed = 0;
  /// The zoo model (sinter-train's entry point) or "" for your own.
  std::string model_name = {};
};

/// `what` as ArtifactContents for `request` (write them with
/// write_artifact(request.dir, ...)): the state named as checkpoints name
/// it ("model.<parameter or buffer>", "optimizer.<i>.exp_avg", ...), the
/// kernels built for request.cpu. It records steps with the model and
/// optimizer (a fresh Adam gets zero moments, its first step's values);
/// train no further with them afterwards. Throws sinter::Error naming
/// what is missing or unsupported.
ArtifactContents training_artifact(const TrainingExport &what, const ArtifactRequest &request,
                                   Loc loc = Loc::current());

} // namespace sinter::aot

#endif // SINTER_AOT_H
