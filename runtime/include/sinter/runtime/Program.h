//===- Program.h - a compiled step: launches over buffers, and its run -----===//
//
// The runtime's view of a compiled step, plain data with no MLIR. What runs:
// buffers (each a place in one planned arena, or the caller's) and the
// steps in order (Note [One list of steps]): kernels of the step's kernel
// library, library calls (a matrix product as a descriptor: Note [Matrix
// products as data] in sinter/runtime/Gemm.h), fills of splat constants
// and copies of results; the signature (arguments and results with their
// names, roles, dtypes and shapes, donations, results handed out of the
// arena). What reports: the plan's peak by source line and by category
// (Program::Report), which nothing needs to run the step. An Executable
// runs a Program on a Device; CpuExecutable is the host's.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_PROGRAM_H
#define SINTER_RUNTIME_PROGRAM_H

#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/Communicator.h"
#include "sinter/runtime/Device.h"
#include "sinter/runtime/Gemm.h"
#include "sinter/runtime/LaunchShape.h"
#include "sinter/runtime/Status.h"
#include "sinter/runtime/StepScalars.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::runtime {

struct Program {
  struct Buffer {
    int64_t bytes = 0;
    /// Where the buffer lies in the arena (planned ahead, see Note [Planning
    /// memory] in sinter/Passes/MemoryPlanner.h), or -1 for a buffer the
    /// caller provides at each run: an argument, or a result that a kernel
    /// writes in place.
    int64_t offset = -1;
    /// The part of the training step that computes the value (see
    /// Step::phase): 0 forward, 1 backward, 2 optimizer update.
    uint8_t phase = 0;
    /// The floats its elements are, if they are: what
    /// RunOptions::checkNumerics looks at (NaN and infinities of each).
    enum class Floats : uint8_t { None, F32, F16, BF16 };
    Floats floats = Floats::None;
    friend bool operator==(const Buffer &, const Buffer &) = default;
  };
  /// Note [One list of steps]
  /// What a run does is one list, in order: kernel launches (with their
  /// launch shape), library calls (a matrix product as a descriptor), fills
  /// (a splat constant written just before its first reader, so that it
  /// takes memory only from then on) and copies (a result that no step
  /// writes into the caller's memory: an argument returned as is, a
  /// constant, a value returned twice, copied into the result's memory
  /// after the last launch). A serialized Program (sinter/runtime/
  /// ProgramFile.h) is this list as written; nothing else decides the
  /// order. Memory planning counts time in launches (kernels and library
  /// calls: launchesOf), which is what fills and copies are placed by.
  struct Step {
    enum class Kind : uint8_t {
      /// Kernel `kernel` (named `<kernelPrefix><kernel>` in the library)
      /// reads `inputs` and writes `outputs`, in its operands' and results'
      /// order.
      Kernel,
      /// A library call, a matrix product: inputs are A and B (and the
      /// bias), outputs C (sinter/runtime/Gemm.h).
      Gemm,
      /// `element`, repeated over all of outputs[0].
      Fill,
      /// inputs[0]'s bytes into the memory of result `result`.
      Copy,
      /// The start of a gradient bucket's all-reduce (Note [Gradient
      /// buckets] in sinter/Passes/Buckets.h): `inputs` copied one after
      /// the other into outputs[0], the bucket (their bytes in all,
      /// elements of `elementType`), whose combination over the ranks by
      /// `reduce` is started through the run's communicator (Note [The
      /// communicator] in sinter/runtime/Communicator.h) and not waited
      /// for.
      AllReduce,
      /// The done of the bucket inputs[0] (written by the AllReduce step
      /// before it): waits for its collective, then copies it out into
      /// `outputs`, the reduced values of the start's inputs, in order.
      AllReduceDone,
      /// inputs[0] (`ranks` slices of `elementType` elements) combined over
      /// the ranks by `reduce`, this rank's slice into outputs[0]; started
      /// and waited for at once (a sharded optimizer's gradients).
      ReduceScatter,
      /// Every rank's inputs[0], in rank order, into outputs[0] (`ranks`
      /// times its bytes); started and waited for at once.
      AllGather,
    };
    Kind kind = Kind::Kernel;
    /// Kernels are numbered across the module the library was built from;
    /// a library call's number has no function in it.
    int kernel = 0;
    std::vector<int> inputs;
    std::vector<int> outputs;
    /// Per input, the byte offset the kernel reads it at (a contiguous slice
    /// of the buffer: a view, no copy); empty when all are 0.
    std::vector<int64_t> inputOffsets = {};
    /// What the kernel computes and for which user line, for profiles:
    /// "matmul 1024x256 <- model.cpp:40".
    std::string label = {};
    /// Every user line the kernel's ops come from, in order: "model.cpp:40,
    /// model.cpp:42" (a fusion's ops may come from several).
    std::string lines = {};
    /// How many of `outputs` are the op's results; the rest are the kernel's
    /// scratch (workspace).
    int results = 0;
    /// The part of the training step the kernel computes (its ops', the
    /// latest of them): memory reports sort buffers by it.
    enum class Phase : uint8_t { Forward, Backward, Update };
    Phase phase = Phase::Forward;
    /// Kind::Gemm: the product, and how the host runs it.
    Gemm gemm = {};
    HostGemmChoice host = {};
    /// The grid and block a kernel is launched with, and its dynamic shared
    /// memory (Note [Launch shapes] in sinter/runtime/LaunchShape.h); the
    /// CPU leaves it at one thread.
    LaunchShape shape = {};
    /// Kind::Fill: the element (1 to 8 bytes, the constant's dtype).
    std::vector<uint8_t> element = {};
    /// Kind::Copy: the result whose memory receives the copy.
    int result = -1;
    /// Kind::AllReduce, AllReduceDone, ReduceScatter: how, and of what.
    ReduceOp reduce = ReduceOp::Sum;
    ElementType elementType = ElementType::F32;
    /// Kind::ReduceScatter and AllGather: the world size the program was
    /// compiled for (its buffers' sizes depend on it; a run in another is
    /// refused). 0 for every other kind.
    int ranks = 0;

    /// A kernel, a library call or a collective (what memory planning
    /// counts time in).
    bool launches() const { return kind == Kind::Kernel || kind == Kind::Gemm || collective(); }
    /// A step run through the communicator.
    bool collective() const {
      return kind == Kind::AllReduce || kind == Kind::AllReduceDone ||
             kind == Kind::ReduceScatter || kind == Kind::AllGather;
    }
    friend bool operator==(const Step &, const Step &) = default;
  };

  /// Note [The step's signature]
  /// Every argument and result of a step by name, role, dtype and shape,
  /// so that a Program read from a file says what to pass it and what it
  /// gives back. Translation gives each argument its role by the phase of
  /// every op that reads it (signatureOf in ProgramTranslation.cpp): read
  /// by an update and by the forward pass, a parameter; by an update but
  /// not the forward pass, optimizer state; a random op's key, a random
  /// key; else a batch input. The pipeline then makes a step scalar of each
  /// argument whose data node records a formula (an optimizer's learning
  /// rate or bias correction), with that formula. Names are "arg<i>" and
  /// "result<i>" unless whoever exports the step gives them. dtype is the
  /// dialect's element type name ("f32", "f16", "bf16", "i32", "i64",
  /// "bool").
  enum class Role : uint8_t {
    Parameter,
    OptimizerState,
    BatchInput,
    StepScalar,
    RandomKey,
    Output
  };
  struct Value {
    std::string name;
    Role role = Role::BatchInput;
    std::string dtype = "f32";
    std::vector<int64_t> shape = {};
    /// A step scalar's formula (Note [Step scalars as formulas] in
    /// sinter/runtime/StepScalars.h); set exactly for role StepScalar.
    std::optional<StepScalarFormula> formula = {};
    /// A random key's stream across steps (Note [Random keys across steps]
    /// in sinter/runtime/StepScalars.h), when whoever exported the step
    /// measured it; only for role RandomKey.
    std::optional<RandomKeyStream> random = {};
    friend bool operator==(const Value &, const Value &) = default;
  };
  struct Signature {
    std::vector<Value> arguments; // per argument
    std::vector<Value> results;   // per result
    friend bool operator==(const Signature &, const Signature &) = default;
  };

  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  /// The buffer of each argument and of each result of the step.
  std::vector<int> arguments;
  std::vector<int> results;
  /// Per result, the argument whose memory it is written into (donated:
  /// the caller passes that argument's pointer for it), or -1. See Note
  /// [Donation] in sinter/Passes/BufferAssignment.h.
  std::vector<int> donors;
  /// Whether a run writes results into its arguments' memory (a donor):
  /// a run that fails may then have changed them.
  bool writesIntoArguments() const {
    return std::any_of(donors.begin(), donors.end(), [](int donor) { return donor >= 0; });
  }
  /// Per result, whether it is a part of the arena that the run hands to
  /// the caller (Note [Results in the arena]).
  std::vector<bool> inArena;
  /// Names, roles, dtypes and shapes of the arguments and results.
  Signature signature;
  /// Bytes of the arena that holds every buffer with an offset.
  int64_t arenaBytes = 0;
  /// The shared library with the kernels.
  std::string library;
  std::string kernelPrefix;

  /// What the plan says of the step's memory and arithmetic, for reports
  /// and out-of-memory messages: nothing reads it to run the step.
  struct Report {
    /// What holds memory at the step's peak (arena buffers live then, and the
    /// results), by the user's source line, most bytes first: the top
    /// consumers an out-of-memory message names.
    struct PeakUse {
      std::string line;    // "model.cpp:40", or the kernel when no line is known
      std::string example; // the largest kernel output from that line
      int64_t bytes = 0;
      friend bool operator==(const PeakUse &, const PeakUse &) = default;
    };
    std::vector<PeakUse> peakUses;
    /// The same bytes, and the inputs, by what they are in training (Note
    /// [Memory by category] in sinter/Passes/MemoryReport.h), in a fixed
    /// order, categories with no bytes left out.
    struct Category {
      std::string name;
      int64_t bytes = 0;
      friend bool operator==(const Category &, const Category &) = default;
    };
    std::vector<Category> peakCategories;
    /// Of the arena at its peak: kernels' workspace, and tensors.
    int64_t peakWorkspaceBytes = 0;
    int64_t peakTensorBytes = 0;
    /// Values the compiler recomputes instead of keeping them (Note
    /// [Rematerialization] in passes/lib/Rematerialize.cpp), and the extra
    /// arithmetic operations that costs per run.
    int64_t recomputedValues = 0;
    int64_t recomputeOperations = 0;
    /// How many times the pass pipeline ran to fit a memory budget (Note
    /// [Fitting a memory budget] in compiler/lib/Compiler/Pipeline.cpp): 1
    /// when the first plan fit, or without a budget.
    int pipelineRuns = 1;
    /// Under a memory budget, the arena the rematerialization pass
    /// estimated for the function it left (Note [One memory model] in
    /// sinter/Passes/MemoryPlanner.h): arenaBytes when the IR knows all
    /// the plan does. 0 without a budget.
    int64_t estimatedArenaBytes = 0;
    friend bool operator==(const Report &, const Report &) = default;
  };
  Report report;

  friend bool operator==(const Program &, const Program &) = default;
};

/// Note [Results in the arena]
/// A result a kernel computes (a gradient, a loss) is planned in the arena
/// like any other buffer, live from the launch that writes it to the end of
/// the step, so it takes memory only from then on: at the end of the
/// forward pass, the step's usual peak, few gradients exist yet. After the
/// run, HostAllocator::split keeps each such result as a block of its own
/// for the caller and frees the rest of the arena (Note [Blocks and
/// segments] in sinter/runtime/Allocator.h). Each is planned at its size
/// class, so its block is what allocate() would have given it. The other
/// results are the caller's: written into a donated argument's memory, or
/// copied into a block the caller allocates (an argument returned as is, a
/// constant, a value returned twice, an empty result). On a CUDA device,
/// whose memory is not split yet, every result is the caller's
/// (TargetDescription::resultsInArena): the kernels write it into memory of
/// its own, and the arena holds none.

/// The steps of `program` that launch (kernels and library calls), in order:
/// the time memory planning counts in.
std::vector<const Program::Step *> launchesOf(const Program &program);

/// A launch as error messages name it: its label (or "kernel N"), and the
/// user's lines its ops come from when there are several:
/// "fusion(exp,+3) f32[64x10] <- model.cpp:85; its ops come from
/// model.cpp:85, model.cpp:81".
std::string describeLaunch(const Program::Step &step);

/// The most bytes a Program's arena, buffer or offset may have (2^48: every
/// sum and size class of them fits 64 bits).
inline constexpr int64_t kMaxProgramBytes = int64_t{1} << 48;

/// The most kernels a Program may number (a file's claim is checked
/// against it before a table of kernels is made).
inline constexpr int kMaxKernels = 1 << 20;

/// Bytes per element of a dtype name of the signature, or 0 for a name
/// that is none.
int64_t elementBytesOf(std::string_view dtype);

/// The name of a role as a serialized Program and messages write it:
/// "parameter", "optimizer_state", "batch_input", "step_scalar",
/// "random_key", "output".
const char *nameOf(Program::Role role);

/// Whether `program` is whole: every index names a buffer, a result or an
/// argument that exists; each step has the operands its kind needs (a
/// fill one output and a 1-8 byte element, a copy one input that is its
/// result's buffer, after the last launch); per-result lists (donors,
/// arena flags) and the signature have one entry per argument and result,
/// each of its buffer's bytes; placed buffers lie in the arena. What
/// CpuExecutable::load and the Program reader check before anything else;
/// the message names the first thing wrong.
Status validateProgram(const Program &program);

/// What running `program` allocates, each block in the size class of the
/// device's allocator (`allocationSize`; the HostAllocator's by default):
/// its arena (with the results it holds), and its results that are
/// neither in the arena nor written into a donated argument's memory (the
/// caller allocates those). Their sum is the step's memory (Note [Step
/// memory] in sinter/Metrics.h).
struct Allocation {
  int64_t arena = 0;
  int64_t results = 0;
};
Allocation allocationOf(const Program &program);
Allocation allocationOf(const Program &program,
                        const std::function<int64_t(int64_t)> &allocationSize);

/// Note [Kernel profile]
/// With SINTER_PROFILE=1 in the environment, every CpuExecutable times each
/// launch, and at exit the process prints the kernels that took the most time,
/// summed by label over all programs and runs (a table on stderr, or
/// SINTER_PROFILE=<path> to write it to a file). The clock is read around each
/// launch only when profiling, so runs without it pay nothing.
struct KernelProfileRow {
  std::string label;
  int64_t launches = 0;
  double seconds = 0;
};
/// The rows so far, most time first (empty unless SINTER_PROFILE is set).
std::vector<KernelProfileRow> kernelProfile();
/// The profile as a text table: the `top` slowest labels and a total.
std::string formatKernelProfile(const std::vector<KernelProfileRow> &rows, size_t top);

/// Note [Checked numerics]
/// With SINTER_CHECK_NUMERICS (CompilerConfig::check_numerics), a run reads
/// every f32 input of the step, then every f32 result of each launch as it
/// is written, and stops at the first NaN (and, at level 2, infinity) with
/// the launch, its ops and the user's line (its label): the first kernel
/// that made one from finite inputs, in compiled and in eager mode (each op
/// its own program), as PyTorch's anomaly mode does for the backward pass.
/// Infinities are only looked for at level 2: a masked attention's scores
/// hold -inf by design (PyTorch and JAX check NaN by default too). What ran
/// before the launch stays written, donated parameters included. Off by
/// default; the cost is one read of every result (benchmarks/README.md).
struct RunOptions {
  /// 0: no check; 1: NaN; 2: NaN and infinities.
  int checkNumerics = 0;
  /// Check the step's inputs too (false when the caller knows they were
  /// checked as an earlier program's results: eager mode's ops).
  bool checkInputs = true;
  /// What the step's collectives (Kind::AllReduce) go through; a program
  /// with collectives refuses to run without one.
  Communicator *communicator = nullptr;
};

/// A Program loaded for a device, ready to run.
class Executable {
public:
  virtual ~Executable() = default;
  virtual const Device &device() const = 0;
  virtual const Program &program() const = 0;
  /// Runs the step: see CpuExecutable::run for what the pointers mean.
  virtual Status run(const std::vector<const void *> &arguments, std::vector<void *> &results,
                     const RunOptions &options = {}) = 0;
};

/// A Program loaded for the CPU: its kernels resolved, its library calls'
/// descriptors checked against its buffers (they run through the kernel
/// library's sinter_gemm_v1). Each run takes the arena from
/// the HostAllocator and gives it back at the end.
class CpuExecutable final : public Executable {
public:
  static StatusOr<std::unique_ptr<CpuExecutable>> load(Program program);
  ~CpuExecutable() override;
  CpuExecutable(const CpuExecutable &) = delete;
  CpuExecutable &operator=(const CpuExecutable &) = delete;

  /// Runs the step. `arguments[i]` points at argumentBytes(i) bytes of
  /// argument i, read only and held by the caller during the run. For a
  /// result in the arena (resultInArena(i)), the run sets `results[i]` to
  /// its block, which the caller then owns (HostAllocator::deallocate);
  /// for the others, `results[i]` points at resultBytes(i) bytes, which the
  /// run writes: kernels write donated results in place; the others (an
  /// argument returned as is, a constant, a result returned twice) are
  /// copied there.
  /// With options.checkNumerics, fails with an OutOfRange status at the
  /// first launch that writes a NaN (Note [Checked numerics]).
  Status run(const std::vector<const void *> &arguments, std::vector<void *> &results,
             const RunOptions &options = {}) override;
  const Device &device() const override { return hostDevice(); }

  int64_t argumentBytes(size_t i) const { return bytesOf(program_.arguments[i]); }
  int64_t resultBytes(size_t i) const { return bytesOf(program_.results[i]); }
  bool resultInArena(size_t i) const { return program_.inArena[i]; }
  /// Bytes of the arena (the step's own buffers).
  int64_t arenaBytes() const { return program_.arenaBytes; }
  const Program &program() const override { return program_; }

private:
  using Kernel = void (*)(const void *const *, void *const *);
  CpuExecutable() = default;
  int64_t bytesOf(int buffer) const { return program_.buffers[buffer].bytes; }

  Program program_;
  void *handle_ = nullptr;
  /// Per kernel number, its function (null for library calls' numbers).
  std::vector<Kernel> kernels_;
  /// The library's entry point for matrix products (kHostGemmSymbol).
  HostGemm hostGemm_ = nullptr;
  /// Per result: true when a kernel writes it in place.
  std::vector<bool> inPlace_;
  /// The arena's parts handed out as results after each run, by offset
  /// (Note [Results in the arena]).
  std::vector<HostAllocator::Part> handedOut_;
  /// Per step, the profile row it adds to (Note [Kernel profile]; null for
  /// fills and copies); empty when not profiling.
  std::vector<KernelProfileRow *> profileRows_;
  /// The OpenMP runtime the library loaded, to size each run's team (Note
  /// [Sharing the cores] in CoreShare.h); null when it loaded none.
  int (*maxThreads_)() = nullptr;
  void (*setThreads_)(int) = nullptr;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_PROGRAM_H
