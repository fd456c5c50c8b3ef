//===- Artifact.h - a compiled training step as a directory -----*- C++ -*-===//
//
// Note [Artifacts]
// An artifact is a directory `NAME.sinter/` (a directory, because dlopen
// needs a real file) that holds everything a runtime with no compiler needs
// to train and evaluate a model:
//
//   manifest.json            what follows, with a SHA-256 per file
//   <function>.program.json  one Program per function (train_step, predict;
//                            Note [The Program as a file])
//   kernels/<function>.so    the CPU kernels, for the CPU level the
//                            manifest names (a CUDA artifact: the CUDA
//                            kernels built for the CUDA simulator)
//   kernels/<function>.<sm_NN>.cubin
//                            a CUDA artifact's kernels for each GPU
//                            architecture (the manifest's "cuda" object)
//   weights.safetensors      the parameters, by the names checkpoints use
//   optimizer.safetensors    the optimizer state, likewise
//   sources/                 the kernels' source (--keep-sources; never
//                            compiled at load)
//
// Artifact::open reads and checks all of it before anything runs, and each
// refusal is a Status naming the file and the fix: a newer format version,
// a file whose SHA-256 differs from the manifest's, code built for CPU
// features this CPU lacks (named, with the --cpu to compile with instead),
// a shared library that is not installed (with its Debian package), a CUDA
// artifact on a machine without its architecture. docs/AOT.md lists every
// key of the manifest.
//
// Note [CUDA artifacts]
// A step recorded on a CUDA device is compiled for the CUDA target once:
// one Program, whose kernels are built twice from the same CUDA C++, for
// the CUDA simulator (kernels/<function>.so, this machine's CPU) and by
// NVRTC for each architecture asked for (kernels/<function>.sm_90.cubin).
// Artifact::open chooses for the machine it runs on: with
// SINTER_CUDA_SIMULATOR, the simulator's build (checked as CPU kernels
// are); else the cubin of the first GPU's architecture (an artifact without
// it, or a machine without a GPU, is refused naming both), and nothing of
// the host's CPU or libraries is asked. Run it on cudaDevice(0) (Note
// [Choosing a CUDA device] in sinter/runtime/CudaExecutable.h), which makes
// the same choice: what CI runs on the simulator is the Program a GPU runs.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_ARTIFACT_H
#define SINTER_RUNTIME_ARTIFACT_H

#include "sinter/runtime/Program.h"
#include "sinter/runtime/Status.h"
#include "sinter/runtime/StepScalars.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sinter::runtime {

inline constexpr const char kArtifactFormat[] = "sinter-artifact";
inline constexpr int kArtifactFormatVersion = 1;

/// A shared library the artifact's code needs, and the Debian package that
/// installs it.
struct SharedLibrary {
  std::string soname;
  std::string package;
};

/// The target the code was built for.
struct ArtifactTarget {
  std::string kind = "cpu"; // "cpu" or "cuda"
  std::string triple;       // "x86_64-linux-gnu"
  std::string cpu;          // "x86-64-v3", "native" (the build machine's)
  /// The CPU features the code uses, as /proc/cpuinfo names them ("avx2").
  std::vector<std::string> features;
  /// CUDA: the architectures it has cubins for ("sm_80", "sm_90").
  std::vector<std::string> cudaArchitectures;
};

/// The optimizer the train step was recorded with.
struct ArtifactOptimizer {
  std::string kind; // "adamw", "adam", "sgd"
  std::map<std::string, double> hyperparameters;
  Schedule schedule;
};

class Artifact {
public:
  /// Opens the artifact at `dir` and checks it whole (Note [Artifacts]).
  /// Without `forThisMachine`, only the files: not whether this machine's
  /// CPU, GPUs and shared libraries can run it (what sinter-compile reads
  /// back of an artifact built for another machine); such an artifact's
  /// functions must not be run here.
  static StatusOr<std::unique_ptr<Artifact>> open(const std::string &dir,
                                                  bool forThisMachine = true);

  const std::string &dir() const { return dir_; }
  const ArtifactTarget &target() const { return target_; }
  const ArtifactOptimizer &optimizer() const { return optimizer_; }
  const std::vector<SharedLibrary> &sharedLibraries() const { return libraries_; }
  uint64_t seed() const { return seed_; }
  /// The zoo model the steps are of (sinter-train's entry point: "mlp"), or
  /// "" for a user's own step.
  const std::string &model() const { return model_; }
  /// The functions, in the manifest's order.
  const std::vector<std::string> &functions() const { return names_; }
  /// The Program of function `name` (its library an absolute path into the
  /// artifact), or null.
  const Program *function(const std::string &name) const;
  /// Absolute paths of the weights and the optimizer state.
  std::string weightsPath() const { return dir_ + "/weights.safetensors"; }
  std::string optimizerPath() const { return dir_ + "/optimizer.safetensors"; }

private:
  std::string dir_;
  ArtifactTarget target_;
  ArtifactOptimizer optimizer_;
  std::vector<SharedLibrary> libraries_;
  uint64_t seed_ = 0;
  std::string model_;
  std::vector<std::string> names_;
  std::map<std::string, Program> programs_;
};

/// 90 for "sm_90" (a cubin's real architecture) or "compute_90" (PTX's
/// virtual one); 0 for anything else.
int cudaArchitectureNumber(const std::string &arch);

/// The architectures of a comma-separated list ("sm_80,sm_90,compute_90";
/// empty: none), or InvalidArgument naming the first that is not sm_NN or
/// compute_NN (an empty one included).
StatusOr<std::vector<std::string>> cudaArchitectureList(const std::string &list);

/// Which of a CUDA artifact's `architectures` a GPU of compute capability
/// `major`.`minor` runs (Note [CUDA artifacts]): the cubin of its own
/// architecture; else a cubin of its major version and a lower minor one
/// (binary compatible), the highest; else the PTX of the highest virtual
/// architecture at or below its own, which the driver compiles; "" when
/// none.
std::string cudaImageFor(const std::vector<std::string> &architectures, int major, int minor);

/// The CPU features kernels built for `cpu` need, as /proc/cpuinfo names
/// them: an x86-64 level's, or for "native" those of this CPU's vector and
/// bit-manipulation extensions that -march=native may use.
std::vector<std::string> cpuTargetFeatures(const std::string &cpu);

/// The SHA-256 of `bytes`, in lowercase hex (OpenSSL's libcrypto).
std::string sha256Hex(std::string_view bytes);

/// The features of this CPU, as /proc/cpuinfo's "flags" names them.
std::vector<std::string> cpuFeatures();

/// The features an x86-64 level requires ("x86-64-v2", "x86-64-v3",
/// "x86-64-v4"), as /proc/cpuinfo names them; empty for another name.
std::vector<std::string> cpuLevelFeatures(const std::string &level);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_ARTIFACT_H
