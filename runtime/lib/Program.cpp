//===- Program.cpp - running a compiled step on the CPU -------------------===//
#include "sinter/runtime/Program.h"

#include "sinter/runtime/Environment.h"

#include "CollectiveOrder.h"
#include "OpenMp.h"
#include "Poison.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/CoreShare.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string_view>

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

/// Every label's row, for the process (Note [Kernel profile]). Rows never
/// move (a deque), so executables keep pointers to theirs.
struct ProfileTable {
  std::mutex mutex;
  std::deque<KernelProfileRow> rows;
  std::map<std::string, KernelProfileRow *> byLabel;

  KernelProfileRow *rowFor(const std::string &label) {
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, inserted] = byLabel.try_emplace(label, nullptr);
    if (inserted) {
      rows.push_back({label});
      it->second = &rows.back();
    }
    return it->second;
  }
};

/// Where the profile goes at exit: "" (not profiling), "-" (stderr) or a path.
const std::string &profileDestination() { return environment().profile; }

void printProfileAtExit();

/// The elements a column-major operand of `rows` x `cols` (before its
/// transpose) with leading dimension `ld` spans over the batch. Each size is
/// below 2^31 (checkGemm), so the sum stays below 2^63.
int64_t spanOf(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  if (rows == 0 || cols == 0 || batch == 0)
    return 0;
  return (batch - 1) * stride + (cols - 1) * ld + rows;
}

/// Checks a library call's descriptor and that its buffers hold what it reads
/// and writes.
Status checkGemmLaunch(const Program &program, size_t l) {
  const Program::Step &launch = program.steps[l];
  const Gemm &gemm = launch.gemm;
  SINTER_RETURN_IF_ERROR(checkGemm(gemm));
  size_t operands = gemm.epilogue == Gemm::Epilogue::Bias ? 3 : 2;
  if (launch.inputs.size() != operands || launch.outputs.size() != 1)
    return absl::InvalidArgumentError(absl::StrCat("step ", l, " (", describe(gemm), ") has ",
                                                   launch.inputs.size(), " inputs and ",
                                                   launch.outputs.size(), " outputs"));
  auto need = [&](const char *what, int buffer, int64_t offset, int64_t elements) -> Status {
    int64_t bytes = program.buffers[buffer].bytes - offset;
    // elements * 4 may not fit 64 bits; bytes / 4 does.
    if (elements > bytes / static_cast<int64_t>(sizeof(float)))
      return absl::InvalidArgumentError(absl::StrCat("step ", l, " (", describe(gemm), ") reads ",
                                                     elements, " floats of ", what, " from buffer ",
                                                     buffer, ", which holds ", bytes, " bytes"));
    return absl::OkStatus();
  };
  auto offset = [&](size_t j) { return launch.inputOffsets.empty() ? 0 : launch.inputOffsets[j]; };
  int64_t aRows = gemm.transa ? gemm.k : gemm.m, aCols = gemm.transa ? gemm.m : gemm.k;
  int64_t bRows = gemm.transb ? gemm.n : gemm.k, bCols = gemm.transb ? gemm.k : gemm.n;
  SINTER_RETURN_IF_ERROR(need("A", launch.inputs[0], offset(0),
                              spanOf(aRows, aCols, gemm.lda, gemm.batch, gemm.strideA)));
  SINTER_RETURN_IF_ERROR(need("B", launch.inputs[1], offset(1),
                              spanOf(bRows, bCols, gemm.ldb, gemm.batch, gemm.strideB)));
  if (operands == 3)
    SINTER_RETURN_IF_ERROR(need("the bias", launch.inputs[2], offset(2), gemm.m));
  return need("C", launch.outputs[0], 0,
              spanOf(gemm.m, gemm.n, gemm.ldc, gemm.batch, gemm.strideC));
}

ProfileTable &profileTable() {
  static ProfileTable *table = [] {
    std::atexit(printProfileAtExit);
    return new ProfileTable();
  }();
  return *table;
}

void printProfileAtExit() {
  std::vector<KernelProfileRow> rows = kernelProfile();
  if (rows.empty())
    return;
  std::string text = formatKernelProfile(rows, 40);
  const std::string &destination = profileDestination();
  if (destination == "-") {
    std::fputs(text.c_str(), stderr);
    return;
  }
  if (std::FILE *file = std::fopen(destination.c_str(), "w")) {
    std::fputs(text.c_str(), file);
    std::fclose(file);
  } else {
    std::fprintf(stderr, "sinter: cannot write the kernel profile to %s\n", destination.c_str());
  }
}

} // namespace

std::vector<KernelProfileRow> kernelProfile() {
  if (profileDestination().empty())
    return {};
  ProfileTable &table = profileTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  std::vector<KernelProfileRow> rows(table.rows.begin(), table.rows.end());
  std::stable_sort(
      rows.begin(), rows.end(),
      [](const KernelProfileRow &a, const KernelProfileRow &b) { return a.seconds > b.seconds; });
  return rows;
}

std::string formatKernelProfile(const std::vector<KernelProfileRow> &rows, size_t top) {
  double total = 0;
  int64_t launches = 0;
  for (const KernelProfileRow &row : rows) {
    total += row.seconds;
    launches += row.launches;
  }
  char head[96];
  std::snprintf(head, sizeof(head), "sinter kernel profile: %lld launches, %.1f ms in kernels\n",
                static_cast<long long>(launches), total * 1e3);
  std::string text = head;
  absl::StrAppend(&text, "      ms       %  launches  kernel\n");
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    char line[64];
    std::snprintf(line, sizeof(line), "%8.2f  %5.1f%%  %8lld  ", rows[i].seconds * 1e3,
                  total > 0 ? 100 * rows[i].seconds / total : 0.0,
                  static_cast<long long>(rows[i].launches));
    absl::StrAppend(&text, line, rows[i].label, "\n");
  }
  if (rows.size() > top)
    absl::StrAppend(&text, "  (", rows.size() - top, " more kernels)\n");
  return text;
}

void prepareOpenMp() {
  // Once per process: setenv must not race with getenv on other threads.
  static std::once_flag once;
  std::call_once(once, [] {
    // Note [OpenMP's idle threads]: between two kernels OpenMP's idle threads
    // spin 30,000 times (libgomp reckons 100,000 spins a millisecond), then
    // sleep. Sleeping at once (OMP_WAIT_POLICY=passive) made each parallel
    // region wake a thread with a system call and wait for it: on a 2-core
    // virtual machine 35-45 us a wake, gpt-mini's compiled step 81 -> 70 ms,
    // resnet18's 133 -> 93, mlp's 0.39 -> 0.27 and gpt-mini's eager step
    // 211 -> 162 ms with the spin. libgomp's own default, 300,000 spins, was
    // no faster, and keeps a core busy ten times as long after the last
    // kernel of a step. A user's OMP_WAIT_POLICY or GOMP_SPINCOUNT (not
    // empty) wins: passive suits several processes sharing the cores. Read
    // once, when OpenMP loads (with the first kernel library). Kernels built
    // by clang (CXX=clang++) run on LLVM's OpenMP, which ignores this and
    // spins for its own KMP_BLOCKTIME.
    auto set = [](const char *name) {
      const char *value = std::getenv(name);
      return value != nullptr && *value != '\0';
    };
    if (!set("OMP_WAIT_POLICY") && !set("GOMP_SPINCOUNT"))
      setenv("GOMP_SPINCOUNT", "30000", /*overwrite=*/1);
  });
}

StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::load(Program program) {
  prepareOpenMp();
  if (program.inArena.empty())
    program.inArena.assign(program.results.size(), false);
  SINTER_RETURN_IF_ERROR(validateProgram(program));
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
  executable->maxThreads_ =
      reinterpret_cast<int (*)()>(dlsym(executable->handle_, "omp_get_max_threads"));
  executable->setThreads_ =
      reinterpret_cast<void (*)(int)>(dlsym(executable->handle_, "omp_set_num_threads"));
  if (executable->maxThreads_ == nullptr || executable->setThreads_ == nullptr)
    executable->maxThreads_ = nullptr, executable->setThreads_ = nullptr;
  for (size_t l = 0; l < program.steps.size(); ++l) {
    const Program::Step &launch = program.steps[l];
    if (launch.kind == Program::Step::Kind::Gemm) {
      if (executable->hostGemm_ == nullptr)
        executable->hostGemm_ =
            reinterpret_cast<HostGemm>(dlsym(executable->handle_, kHostGemmSymbol));
      if (executable->hostGemm_ == nullptr)
        return absl::FailedPreconditionError(absl::StrCat(
            "the kernel library ", program.library, " has no ", kHostGemmSymbol,
            " for the program's matrix products (built by another version of Sinter?)"));
      continue;
    }
    if (launch.kind != Program::Step::Kind::Kernel)
      continue;
    if (static_cast<size_t>(launch.kernel) >= executable->kernels_.size())
      executable->kernels_.resize(launch.kernel + 1, nullptr);
    Kernel &kernel = executable->kernels_[launch.kernel];
    if (kernel != nullptr)
      continue;
    std::string name = absl::StrCat(program.kernelPrefix, launch.kernel);
    void *symbol = dlsym(executable->handle_, name.c_str());
    if (symbol == nullptr)
      return absl::FailedPreconditionError(
          absl::StrCat("the kernel library ", program.library, " has no kernel ", name));
    kernel = reinterpret_cast<Kernel>(symbol);
  }

  // Buffers without an offset are bound per run: arguments, and results
  // that kernels write in place.
  size_t n = program.buffers.size();
  std::vector<bool> bound(n, false);
  for (int b : program.arguments)
    bound[b] = true;
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    bool inPlace = program.buffers[b].offset < 0 && !bound[b];
    bound[b] = bound[b] || inPlace;
    executable->inPlace_.push_back(inPlace);
    const Program::Buffer &buffer = program.buffers[b];
    if (program.inArena[r] &&
        (buffer.offset < 0 || buffer.offset % 64 != 0 || buffer.bytes == 0 ||
         buffer.offset + HostAllocator::size_class(buffer.bytes) > program.arenaBytes))
      return absl::InvalidArgumentError(
          absl::StrCat("result ", r, " is not a block of the arena: offset ", buffer.offset, ", ",
                       buffer.bytes, " bytes, arena of ", program.arenaBytes));
    if (program.inArena[r])
      executable->handedOut_.push_back({buffer.offset, HostAllocator::size_class(buffer.bytes)});
  }
  // The blocks handed out must not share a byte (each is freed on its own).
  std::vector<HostAllocator::Part> &parts = executable->handedOut_;
  std::sort(parts.begin(), parts.end(),
            [](const auto &a, const auto &b) { return a.offset < b.offset; });
  for (size_t i = 1; i < parts.size(); ++i)
    if (parts[i].offset < parts[i - 1].offset + parts[i - 1].bytes)
      return absl::InvalidArgumentError(
          absl::StrCat("two results in the arena share bytes: [", parts[i - 1].offset, ", ",
                       parts[i - 1].offset + parts[i - 1].bytes, ") and [", parts[i].offset, ", ",
                       parts[i].offset + parts[i].bytes, ")"));
  for (size_t b = 0; b < n; ++b) {
    const Program::Buffer &buffer = program.buffers[b];
    if (buffer.offset < 0 && !bound[b]) // validateProgram placed the others in the arena
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b, " of the program has no place: offset ", buffer.offset, ", ",
                       buffer.bytes, " bytes, arena of ", program.arenaBytes));
  }
  // Each result that no kernel writes in place and the arena does not hold
  // is copied, once, by a copy step (Note [One list of steps]).
  std::vector<int> copies(program.results.size(), 0);
  for (const Program::Step &step : program.steps)
    if (step.kind == Program::Step::Kind::Copy)
      ++copies[step.result];
  for (size_t r = 0; r < program.results.size(); ++r) {
    bool copied = !program.inArena[r] && !executable->inPlace_[r] &&
                  program.buffers[program.results[r]].bytes > 0;
    if (copies[r] != (copied ? 1 : 0))
      return absl::InvalidArgumentError(
          absl::StrCat("result ", r, " is copied by ", copies[r], " steps, but ",
                       copied ? "needs one copy: no kernel writes it in place and the arena "
                                "does not hold it"
                              : "needs none"));
  }
  if (!profileDestination().empty())
    for (const Program::Step &step : program.steps)
      executable->profileRows_.push_back(
          !step.launches()
              ? nullptr
              : profileTable().rowFor(step.label.empty() ? absl::StrCat("kernel ", step.kernel)
                                                         : step.label));
  executable->program_ = std::move(program);
  return executable;
}

Allocation allocationOf(const Program &program) {
  return allocationOf(program, [](int64_t bytes) { return HostAllocator::size_class(bytes); });
}

Allocation allocationOf(const Program &program,
                        const std::function<int64_t(int64_t)> &allocationSize) {
  Allocation allocation;
  allocation.arena = allocationSize(program.arenaBytes);
  for (size_t r = 0; r < program.results.size(); ++r)
    // A donated result takes its argument's memory; one in the arena, the
    // arena's.
    if (program.donors[r] < 0 && (r >= program.inArena.size() || !program.inArena[r]))
      allocation.results += allocationSize(program.buffers[program.results[r]].bytes);
  return allocation;
}

std::vector<const Program::Step *> launchesOf(const Program &program) {
  std::vector<const Program::Step *> launches;
  for (const Program::Step &step : program.steps)
    if (step.launches())
      launches.push_back(&step);
  return launches;
}

const char *nameOf(Program::Role role) {
  switch (role) {
  case Program::Role::Parameter:
    return "parameter";
  case Program::Role::OptimizerState:
    return "optimizer_state";
  case Program::Role::BatchInput:
    return "batch_input";
  case Program::Role::StepScalar:
    return "step_scalar";
  case Program::Role::RandomKey:
    return "random_key";
  case Program::Role::Output:
    return "output";
  }
  return "unknown";
}

int64_t elementBytesOf(std::string_view dtype) {
  if (dtype == "f32" || dtype == "i32")
    return 4;
  if (dtype == "f16" || dtype == "bf16")
    return 2;
  if (dtype == "i64")
    return 8;
  if (dtype == "bool")
    return 1;
  return 0;
}

namespace {

Status invalid(const std::string &what) { return absl::InvalidArgumentError(what); }

/// Checks one value of the signature against its buffer.
Status checkValue(const Program &program, const Program::Value &value, const char *kind,
                  size_t index, int buffer) {
  std::string which = absl::StrCat(kind, " ", index, " ('", value.name, "')");
  if (value.name.empty())
    return invalid(absl::StrCat(kind, " ", index, " has no name"));
  int64_t element = elementBytesOf(value.dtype);
  if (element == 0)
    return invalid(absl::StrCat(which, " has dtype '", value.dtype,
                                "', not one of f32, f16, bf16, i32, i64, bool"));
  if (value.shape.size() > 16)
    return invalid(absl::StrCat(which, " has ", value.shape.size(), " dims (at most 16)"));
  int64_t bytes = element;
  for (int64_t dim : value.shape) {
    if (dim < 0)
      return invalid(absl::StrCat(which, " has a negative dim ", dim));
    if (dim != 0 && bytes > std::numeric_limits<int64_t>::max() / dim)
      return invalid(absl::StrCat(which, " has a shape whose byte count overflows"));
    bytes *= dim;
  }
  int64_t held = program.buffers[buffer].bytes;
  if (bytes != held)
    return invalid(absl::StrCat(which, " is ", value.dtype, "[", absl::StrJoin(value.shape, "x"),
                                "], ", bytes, " bytes, but its buffer ", buffer, " holds ", held));
  return absl::OkStatus();
}

} // namespace

std::string describeLaunch(const Program::Step &step) {
  std::string text = step.label.empty() ? absl::StrCat("kernel ", step.kernel) : step.label;
  if (step.lines.find(',') != std::string::npos)
    absl::StrAppend(&text, "; its ops come from ", step.lines);
  return text;
}

Status validateProgram(const Program &program) {
  const int64_t buffers = static_cast<int64_t>(program.buffers.size());
  auto isBuffer = [&](int b) { return b >= 0 && b < buffers; };
  if (program.arenaBytes < 0 || program.arenaBytes > kMaxProgramBytes)
    return invalid(absl::StrCat("the arena has ", program.arenaBytes, " bytes (0 to 2^48)"));
  for (int64_t b = 0; b < buffers; ++b) {
    const Program::Buffer &buffer = program.buffers[b];
    if (buffer.bytes < 0 || buffer.bytes > kMaxProgramBytes || buffer.offset < -1 ||
        buffer.offset > kMaxProgramBytes || buffer.phase > 2)
      return invalid(absl::StrCat("buffer ", b, " has ", buffer.bytes, " bytes at offset ",
                                  buffer.offset, " in phase ", buffer.phase));
    if (buffer.offset >= 0 &&
        (buffer.offset > program.arenaBytes || buffer.bytes > program.arenaBytes - buffer.offset))
      return invalid(absl::StrCat("buffer ", b, " of the program has no place: offset ",
                                  buffer.offset, ", ", buffer.bytes, " bytes, arena of ",
                                  program.arenaBytes));
  }
  for (const auto &[list, name] :
       {std::pair{&program.arguments, "argument"}, std::pair{&program.results, "result"}})
    for (size_t i = 0; i < list->size(); ++i)
      if (!isBuffer((*list)[i]))
        return invalid(absl::StrCat(name, " ", i, " names buffer ", (*list)[i], " of ", buffers));
  size_t results = program.results.size();
  if (program.donors.size() != results || program.inArena.size() != results)
    return invalid(absl::StrCat("the program has ", results, " results but ",
                                program.inArena.size(), " arena flags and ", program.donors.size(),
                                " donors"));
  for (size_t a = 0; a < program.arguments.size(); ++a)
    if (program.buffers[program.arguments[a]].offset != -1)
      return invalid(absl::StrCat("argument ", a,
                                  " has an arena offset; arguments are the "
                                  "caller's memory"));
  // Note [Donation]: a donated result is written in place into its
  // argument's memory, the same bytes, one result per argument.
  std::vector<bool> donated(program.arguments.size(), false);
  for (size_t r = 0; r < results; ++r) {
    int donor = program.donors[r];
    if (donor < -1 || donor >= static_cast<int64_t>(program.arguments.size()))
      return invalid(absl::StrCat("result ", r, " is donated argument ", donor, " of ",
                                  program.arguments.size()));
    if (donor < 0)
      continue;
    const Program::Buffer &result = program.buffers[program.results[r]];
    if (donated[donor] || program.inArena[r] || result.offset != -1 ||
        result.bytes != program.buffers[program.arguments[donor]].bytes)
      return invalid(absl::StrCat("result ", r, " (", result.bytes,
                                  " bytes) cannot be written into argument ", donor, " (",
                                  program.buffers[program.arguments[donor]].bytes,
                                  " bytes): donations are one result per argument, of its bytes, "
                                  "written in place"));
    donated[donor] = true;
  }
  bool copying = false;
  std::map<int, size_t> openBuckets; // bucket buffer -> its all-reduce's step
  for (size_t s = 0; s < program.steps.size(); ++s) {
    const Program::Step &step = program.steps[s];
    for (const std::vector<int> *list : {&step.inputs, &step.outputs})
      for (int b : *list)
        if (!isBuffer(b))
          return invalid(absl::StrCat("step ", s, " names buffer ", b, " of ", buffers));
    switch (step.kind) {
    case Program::Step::Kind::Kernel:
    case Program::Step::Kind::Gemm: {
      if (copying)
        return invalid(absl::StrCat("step ", s, " launches after a copy of a result"));
      if (step.kernel < 0 || step.kernel >= kMaxKernels)
        return invalid(absl::StrCat("step ", s, " names kernel ", step.kernel, " (0 to ",
                                    kMaxKernels - 1, ")"));
      if (step.results < 0 || step.results > static_cast<int>(step.outputs.size()))
        return invalid(absl::StrCat("step ", s, " has ", step.results, " results of ",
                                    step.outputs.size(), " outputs"));
      if (!step.inputOffsets.empty() && step.inputOffsets.size() != step.inputs.size())
        return invalid(absl::StrCat("step ", s, " has ", step.inputOffsets.size(),
                                    " input offsets for ", step.inputs.size(), " inputs"));
      for (size_t j = 0; j < step.inputOffsets.size(); ++j)
        if (step.inputOffsets[j] < 0 ||
            step.inputOffsets[j] > program.buffers[step.inputs[j]].bytes)
          return invalid(absl::StrCat("step ", s, " reads input ", j, " at byte ",
                                      step.inputOffsets[j], " of its ",
                                      program.buffers[step.inputs[j]].bytes));
      if (static_cast<int>(step.phase) > 2)
        return invalid(absl::StrCat("step ", s, " has phase ", static_cast<int>(step.phase)));
      if (step.kind == Program::Step::Kind::Gemm)
        SINTER_RETURN_IF_ERROR(checkGemmLaunch(program, s));
      for (int d = 0; d < 3; ++d)
        if (step.shape.grid[d] < 1 || step.shape.block[d] < 1)
          return invalid(
              absl::StrCat("step ", s, " has a launch shape with an empty grid or block"));
      if (step.shape.sharedBytes < 0)
        return invalid(
            absl::StrCat("step ", s, " has ", step.shape.sharedBytes, " bytes of shared memory"));
      break;
    }
    case Program::Step::Kind::Fill: {
      if (copying)
        return invalid(absl::StrCat("step ", s, " fills after a copy of a result"));
      if (!step.inputs.empty() || step.outputs.size() != 1)
        return invalid(absl::StrCat("fill step ", s, " has ", step.inputs.size(), " inputs and ",
                                    step.outputs.size(), " outputs (0 and 1)"));
      int64_t element = static_cast<int64_t>(step.element.size());
      if (element < 1 || element > 8 || program.buffers[step.outputs[0]].bytes % element != 0)
        return invalid(absl::StrCat("fill step ", s, " repeats an element of ", element,
                                    " bytes over ", program.buffers[step.outputs[0]].bytes));
      break;
    }
    case Program::Step::Kind::AllReduce:
    case Program::Step::Kind::AllReduceDone: {
      bool start = step.kind == Program::Step::Kind::AllReduce;
      const char *what = start ? "all-reduce step " : "all-reduce done step ";
      if (copying)
        return invalid(absl::StrCat("step ", s, " reduces after a copy of a result"));
      if (static_cast<int>(step.reduce) > 3 || static_cast<int>(step.elementType) > 6 ||
          static_cast<int>(step.phase) > 2)
        return invalid(absl::StrCat(what, s, " has reduction ", static_cast<int>(step.reduce),
                                    ", element type ", static_cast<int>(step.elementType),
                                    ", phase ", static_cast<int>(step.phase)));
      // The tensors are the start's inputs and the done's outputs; the
      // bucket is the start's one output and the done's one input.
      const std::vector<int> &tensors = start ? step.inputs : step.outputs;
      const std::vector<int> &bucket = start ? step.outputs : step.inputs;
      if (tensors.empty() || bucket.size() != 1 ||
          step.results != static_cast<int>(step.outputs.size()))
        return invalid(absl::StrCat(
            what, s, " has ", step.inputs.size(), " inputs, ", step.outputs.size(), " outputs and ",
            step.results, " results (", start ? "tensors and one bucket" : "one bucket and tensors",
            ", every output a result)"));
      int64_t width = elementBytes(step.elementType), total = 0;
      for (int b : tensors) {
        int64_t bytes = program.buffers[b].bytes;
        if (bytes % width != 0)
          return invalid(absl::StrCat(what, s, " reduces a buffer of ", bytes, " bytes (",
                                      std::string(elementTypeName(step.elementType)),
                                      " elements of ", width, " bytes)"));
        total += bytes;
      }
      if (program.buffers[bucket[0]].bytes != total)
        return invalid(absl::StrCat(what, s, "'s bucket has ", program.buffers[bucket[0]].bytes,
                                    " bytes, its tensors ", total));
      if (start) {
        if (!openBuckets.emplace(bucket[0], s).second)
          return invalid(
              absl::StrCat(what, s, " starts bucket buffer ", bucket[0], ", which is in flight"));
      } else {
        auto open = openBuckets.find(bucket[0]);
        if (open == openBuckets.end())
          return invalid(absl::StrCat(what, s, " waits for buffer ", bucket[0],
                                      ", which no all-reduce step before it started"));
        if (program.steps[open->second].reduce != step.reduce ||
            program.steps[open->second].elementType != step.elementType)
          return invalid(
              absl::StrCat(what, s, " waits for step ", open->second, ", which reduces otherwise"));
        openBuckets.erase(open);
      }
      break;
    }
    case Program::Step::Kind::ReduceScatter:
    case Program::Step::Kind::AllGather: {
      bool scatter = step.kind == Program::Step::Kind::ReduceScatter;
      const char *what = scatter ? "reduce-scatter step " : "all-gather step ";
      if (copying)
        return invalid(absl::StrCat("step ", s, " communicates after a copy of a result"));
      if (static_cast<int>(step.reduce) > 3 || static_cast<int>(step.elementType) > 6 ||
          static_cast<int>(step.phase) > 2 || step.ranks < 1)
        return invalid(absl::StrCat(what, s, " has reduction ", static_cast<int>(step.reduce),
                                    ", element type ", static_cast<int>(step.elementType),
                                    ", phase ", static_cast<int>(step.phase), ", ", step.ranks,
                                    " ranks"));
      if (step.inputs.size() != 1 || step.outputs.size() != 1 || step.results != 1 ||
          step.inputOffsets.size() > 1)
        return invalid(absl::StrCat(what, s, " has ", step.inputs.size(), " inputs, ",
                                    step.outputs.size(), " outputs, ", step.inputOffsets.size(),
                                    " input offsets and ", step.results,
                                    " results (one of each, the offset optional)"));
      int64_t offset = step.inputOffsets.empty() ? 0 : step.inputOffsets[0];
      int64_t available = program.buffers[step.inputs[0]].bytes - offset;
      int64_t out = program.buffers[step.outputs[0]].bytes;
      // It reads the whole world's slices of its output's size (a
      // reduce-scatter), or its own slice of the output (an all-gather).
      int64_t unit = elementBytes(step.elementType) * (scatter ? 1 : step.ranks);
      bool fits = scatter ? out <= available / step.ranks : out / step.ranks <= available;
      if (offset < 0 || available < 0 || out % unit != 0 || !fits)
        return invalid(absl::StrCat(what, s, " writes ", out, " bytes from ", available,
                                    " bytes of its input at byte ", offset, " in a world of ",
                                    step.ranks, " (",
                                    std::string(elementTypeName(step.elementType)), " elements)"));
      break;
    }
    case Program::Step::Kind::Copy:
      copying = true;
      if (step.inputs.size() != 1 || !step.outputs.empty())
        return invalid(absl::StrCat("copy step ", s, " has ", step.inputs.size(), " inputs and ",
                                    step.outputs.size(), " outputs (1 and 0)"));
      if (step.result < 0 || step.result >= static_cast<int64_t>(results))
        return invalid(
            absl::StrCat("copy step ", s, " copies into result ", step.result, " of ", results));
      if (program.results[step.result] != step.inputs[0])
        return invalid(absl::StrCat("copy step ", s, " copies buffer ", step.inputs[0],
                                    " into result ", step.result, ", which is not that buffer"));
      break;
    default:
      return invalid(absl::StrCat("step ", s, " is of kind ", static_cast<int>(step.kind)));
    }
  }
  if (!openBuckets.empty())
    return invalid(absl::StrCat("all-reduce step ", openBuckets.begin()->second,
                                " is never waited for (no all-reduce done step reads buffer ",
                                openBuckets.begin()->first, ")"));
  const Program::Signature &signature = program.signature;
  if (signature.arguments.empty() && signature.results.empty())
    return absl::OkStatus(); // a program without names (built by hand)
  if (signature.arguments.size() != program.arguments.size() || signature.results.size() != results)
    return invalid(absl::StrCat("the signature names ", signature.arguments.size(),
                                " arguments and ", signature.results.size(),
                                " results; the program has ", program.arguments.size(), " and ",
                                results));
  std::set<std::string_view> names;
  for (size_t i = 0; i < signature.arguments.size(); ++i) {
    const Program::Value &value = signature.arguments[i];
    SINTER_RETURN_IF_ERROR(checkValue(program, value, "argument", i, program.arguments[i]));
    if (value.role == Program::Role::Output)
      return invalid(absl::StrCat("argument ", i, " ('", value.name, "') has the role output"));
    if (value.formula.has_value() != (value.role == Program::Role::StepScalar))
      return invalid(absl::StrCat("argument ", i, " ('", value.name, "') is a ", nameOf(value.role),
                                  value.formula ? " with a formula" : " without a formula"));
    if (value.random &&
        (value.role != Program::Role::RandomKey || value.dtype != "i64" || !value.shape.empty()))
      return invalid(absl::StrCat("argument ", i, " ('", value.name, "') is a ", nameOf(value.role),
                                  " ", value.dtype,
                                  " with a random stream; only an i64 random key has one"));
    if (value.formula && (!value.shape.empty() ||
                          (value.dtype != "f32" && value.dtype != "f16" && value.dtype != "bf16")))
      return invalid(absl::StrCat("step scalar ", i, " ('", value.name, "') is ", value.dtype, "[",
                                  absl::StrJoin(value.shape, "x"),
                                  "], not a floating-point scalar"));
    if (!names.insert(value.name).second)
      return invalid(absl::StrCat("two arguments are named '", value.name, "'"));
  }
  names.clear();
  for (size_t r = 0; r < results; ++r) {
    const Program::Value &value = signature.results[r];
    SINTER_RETURN_IF_ERROR(checkValue(program, value, "result", r, program.results[r]));
    if (value.role != Program::Role::Output || value.formula || value.random)
      return invalid(absl::StrCat("result ", r, " ('", value.name, "') has the role ",
                                  nameOf(value.role), value.formula ? " and a formula" : "",
                                  ", not output"));
    if (!names.insert(value.name).second)
      return invalid(absl::StrCat("two results are named '", value.name, "'"));
  }
  return absl::OkStatus();
}

CpuExecutable::~CpuExecutable() {
  forgetCollectiveOrder(this);
  if (handle_ != nullptr)
    dlclose(handle_);
}

namespace {

/// Starts a bucket's all-reduce (Note [Gradient buckets] in
/// sinter/Passes/Buckets.h) on host memory: the inputs copied one after the
/// other into the bucket out[0], and its combination over the ranks started.
/// `what` names the launch in the communicator's messages.
StatusOr<Communicator::Ticket> startAllReduce(const Program &program, const Program::Step &step,
                                              const std::vector<const void *> &in, void *bucket,
                                              Communicator *communicator, const std::string &what) {
  if (communicator == nullptr)
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": the step reduces over ranks but runs without a process group "
                           "(sinter::distributed::init_process_group(); for a session of an "
                           "artifact, sinter_session_set_process_group)"));
  int64_t offset = 0;
  for (size_t j = 0; j < step.inputs.size(); ++j) {
    int64_t bytes = program.buffers[step.inputs[j]].bytes;
    std::memmove(static_cast<uint8_t *>(bucket) + offset, in[j], static_cast<size_t>(bytes));
    offset += bytes;
  }
  return communicator->allReduce(bucket, offset / elementBytes(step.elementType), step.elementType,
                                 step.reduce, what);
}

/// A reduce-scatter or all-gather step on host memory, waited for at once.
Status runShardedCollective(const Program &program, const Program::Step &step, const void *in,
                            void *out, Communicator *communicator, const std::string &what) {
  if (communicator == nullptr || communicator->size() != step.ranks)
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": the step was compiled for a world of ", step.ranks, " ranks and runs in ",
        communicator == nullptr ? std::string("no process group")
                                : absl::StrCat("a world of ", communicator->size())));
  int64_t bytes = program.buffers[step.outputs[0]].bytes;
  Communicator::Ticket ticket =
      step.kind == Program::Step::Kind::ReduceScatter
          ? communicator->reduceScatter(in, out, bytes / elementBytes(step.elementType),
                                        step.elementType, step.reduce, what)
          : communicator->allGather(in, out, bytes / step.ranks, what);
  return communicator->wait(ticket);
}

/// A bucket's reduced values copied out into the done's outputs.
void finishAllReduce(const Program &program, const Program::Step &done, const void *bucket,
                     const std::vector<void *> &out) {
  int64_t offset = 0;
  for (size_t j = 0; j < done.outputs.size(); ++j) {
    int64_t bytes = program.buffers[done.outputs[j]].bytes;
    std::memmove(out[j], static_cast<const uint8_t *>(bucket) + offset, static_cast<size_t>(bytes));
    offset += bytes;
  }
}

/// Whether any of `count` floats at `x` is NaN (or, with `infinities`, not
/// finite): x - x is NaN exactly for NaN and infinities. Branch-free, in
/// blocks, so the compiler vectorises it.
bool anyNonFinite(const float *x, int64_t count, bool infinities) {
  constexpr int64_t kBlock = 1024;
  for (int64_t start = 0; start < count; start += kBlock) {
    int64_t end = std::min(count, start + kBlock);
    int bad = 0;
    if (infinities)
      for (int64_t e = start; e < end; ++e)
        bad |= !((x[e] - x[e]) == 0.0f); // NaN for NaN and infinities
    else
      for (int64_t e = start; e < end; ++e)
        bad |= !(x[e] == x[e]);
    if (bad != 0)
      return true;
  }
  return false;
}

/// The first element of `buffer`'s values at `data` (aligned: buffers are)
/// that is NaN (or, with `infinities`, not finite), or -1; its description
/// in `what`. f16 and bf16 values are read by their bits (Note [Half
/// precision in kernels] in kernels/common/half.h): all exponent bits set is
/// an infinity, or a NaN where any mantissa bit is set too.
int64_t firstNonFinite(const uint8_t *data, const Program::Buffer &buffer, bool infinities,
                       std::string &what) {
  using Floats = Program::Buffer::Floats;
  if (buffer.floats == Floats::None)
    return -1;
  if (buffer.floats == Floats::F32) {
    const auto *x = reinterpret_cast<const float *>(data);
    int64_t count = buffer.bytes / 4;
    if (!anyNonFinite(x, count, infinities))
      return -1;
    for (int64_t e = 0; e < count; ++e)
      if (x[e] != x[e] || (infinities && (x[e] == INFINITY || x[e] == -INFINITY))) {
        what = x[e] != x[e] ? "NaN" : x[e] > 0 ? "+inf" : "-inf";
        return e;
      }
    return -1;
  }
  const uint16_t exponent = buffer.floats == Floats::F16 ? 0x7c00 : 0x7f80;
  const uint16_t mantissa = 0x7fff & ~exponent;
  const auto *x = reinterpret_cast<const uint16_t *>(data);
  for (int64_t e = 0, count = buffer.bytes / 2; e < count; ++e) {
    if ((x[e] & exponent) != exponent)
      continue;
    bool nan = (x[e] & mantissa) != 0;
    if (nan || infinities) {
      what = nan ? "NaN" : (x[e] & 0x8000) != 0 ? "-inf" : "+inf";
      return e;
    }
  }
  return -1;
}

/// "1024 floats", "512 bf16 values": a checked buffer's elements, in messages.
std::string elementsOf(const Program::Buffer &buffer) {
  using Floats = Program::Buffer::Floats;
  if (buffer.floats == Floats::F16 || buffer.floats == Floats::BF16)
    return absl::StrCat(buffer.bytes / 2, buffer.floats == Floats::F16 ? " f16" : " bf16",
                        " values");
  return absl::StrCat(buffer.bytes / 4, " floats");
}

} // namespace

Status CpuExecutable::run(const std::vector<const void *> &arguments, std::vector<void *> &results,
                          const RunOptions &options) {
  if (arguments.size() != program_.arguments.size())
    return absl::InvalidArgumentError(absl::StrCat("the step takes ", program_.arguments.size(),
                                                   " arguments, got ", arguments.size()));
  if (results.size() != program_.results.size())
    return absl::InvalidArgumentError(absl::StrCat("the step returns ", program_.results.size(),
                                                   " results, got room for ", results.size()));
  SINTER_RETURN_IF_ERROR(checkCollectiveOrderOnce(this, program_, options.communicator));
  // The arena is taken for the run only (from the allocator's cache after
  // the first run), so an executable kept for later holds no memory.
  HostAllocator &allocator = HostAllocator::get();
  std::unique_ptr<uint8_t, std::function<void(uint8_t *)>> arena(
      static_cast<uint8_t *>(allocator.allocate(program_.arenaBytes)),
      [&](uint8_t *p) { allocator.deallocate(p); });
  if (arena == nullptr)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the step's arena of ", program_.arenaBytes, " bytes"));
  // The team for this run (Note [Sharing the cores]); the caller's thread
  // count is set back however the run ends.
  int configured = maxThreads_ != nullptr ? maxThreads_() : 1;
  int team = CoreShare::get().team(configured);
  if (team != configured)
    setThreads_(team);
  struct RestoreTeam {
    void (*set)(int);
    int configured;
    ~RestoreTeam() {
      if (set != nullptr)
        set(configured);
    }
  } restore{team != configured ? setThreads_ : nullptr, configured};
  std::vector<uint8_t *> at(program_.buffers.size(), nullptr);
  for (size_t b = 0; b < at.size(); ++b)
    if (program_.buffers[b].offset >= 0)
      at[b] = arena.get() + program_.buffers[b].offset;
  for (size_t i = 0; i < arguments.size(); ++i)
    at[program_.arguments[i]] = static_cast<uint8_t *>(const_cast<void *>(arguments[i]));
  for (size_t i = 0; i < results.size(); ++i)
    if (inPlace_[i])
      at[program_.results[i]] = static_cast<uint8_t *>(results[i]);
  bool infinities = options.checkNumerics >= 2;
  std::string what;
  if (options.checkNumerics > 0 && options.checkInputs)
    for (size_t i = 0; i < arguments.size(); ++i) {
      const Program::Buffer &buffer = program_.buffers[program_.arguments[i]];
      int64_t e = firstNonFinite(at[program_.arguments[i]], buffer, infinities, what);
      if (e >= 0)
        return absl::OutOfRangeError(absl::StrCat(
            "input ", i, " of the step (", elementsOf(buffer), ") holds ", what, " at element ", e,
            " before any kernel ran: it comes from outside the step (the "
            "batch, a parameter, or a value an earlier step computed)"));
    }
  // Note [Poisoned arenas] (ASan builds): while a step runs, only its
  // buffers in the arena can be touched.
  uint8_t *const arenaBegin = arena.get(), *const arenaEnd = arenaBegin + program_.arenaBytes;
  // Buckets started and not yet done (Note [Gradient buckets] in
  // sinter/Passes/Buckets.h), by bucket buffer: waited for however the run
  // ends, so that no collective writes into the arena after it; never
  // poisoned while in flight.
  struct InFlight {
    Communicator *communicator = nullptr;
    std::map<int, Communicator::Ticket> tickets;
    ~InFlight() {
      for (const auto &[bucket, ticket] : tickets)
        (void)communicator->wait(ticket);
    }
  } inFlight{options.communicator, {}};
  auto touch = [&](const Program::Step &step, void (*mark)(const void *, int64_t)) {
    for (const std::vector<int> *buffers : {&step.inputs, &step.outputs})
      for (int b : *buffers)
        if (at[b] >= arenaBegin && at[b] < arenaEnd && !inFlight.tickets.count(b))
          mark(at[b], program_.buffers[b].bytes);
  };
  if (kPoisoning)
    poison(arenaBegin, program_.arenaBytes);
  std::vector<const void *> in;
  std::vector<void *> out;
  bool profiling = !profileRows_.empty();
  size_t launchCount = 0;
  for (const Program::Step &step : program_.steps)
    launchCount += step.launches() ? 1 : 0;
  for (size_t s = 0, l = 0; s < program_.steps.size(); ++s) {
    const Program::Step &launch = program_.steps[s];
    if (kPoisoning) {
      if (s > 0)
        touch(program_.steps[s - 1], poison);
      touch(launch, unpoison);
    }
    if (launch.kind == Program::Step::Kind::Fill) {
      // Constants are written at every run, as the arena's bytes are shared
      // with other programs between runs.
      fillWith(at[launch.outputs[0]], program_.buffers[launch.outputs[0]].bytes, launch.element);
      continue;
    }
    if (launch.kind == Program::Step::Kind::Copy) {
      std::memcpy(results[launch.result], at[launch.inputs[0]],
                  program_.buffers[launch.inputs[0]].bytes);
      continue;
    }
    in.clear();
    out.clear();
    for (size_t j = 0; j < launch.inputs.size(); ++j)
      in.push_back(at[launch.inputs[j]] +
                   (launch.inputOffsets.empty() ? 0 : launch.inputOffsets[j]));
    for (int b : launch.outputs)
      out.push_back(at[b]);
    size_t launchIndex = l++;
    auto run = [&]() -> Status {
      if (launch.kind == Program::Step::Kind::AllReduce) {
        StatusOr<Communicator::Ticket> ticket =
            startAllReduce(program_, launch, in, out[0], options.communicator,
                           absl::StrCat("launch ", launchIndex, " of ", launchCount, " (",
                                        describeLaunch(launch), ")"));
        if (!ticket.ok())
          return ticket.status();
        inFlight.tickets.emplace(launch.outputs[0], *ticket);
        return absl::OkStatus();
      }
      if (launch.kind == Program::Step::Kind::AllReduceDone) {
        auto started = inFlight.tickets.find(launch.inputs[0]);
        Status status = options.communicator->wait(started->second);
        inFlight.tickets.erase(started);
        SINTER_RETURN_IF_ERROR(status);
        finishAllReduce(program_, launch, in[0], out);
        return absl::OkStatus();
      }
      if (launch.kind == Program::Step::Kind::ReduceScatter ||
          launch.kind == Program::Step::Kind::AllGather)
        return runShardedCollective(program_, launch, in[0], out[0], options.communicator,
                                    absl::StrCat("launch ", launchIndex, " of ", launchCount, " (",
                                                 describeLaunch(launch), ")"));
      if (launch.kind == Program::Step::Kind::Gemm)
        runGemmOnHost(hostGemm_, launch.gemm, launch.host, static_cast<const float *>(in[0]),
                      static_cast<const float *>(in[1]), static_cast<float *>(out[0]),
                      in.size() > 2 ? static_cast<const float *>(in[2]) : nullptr);
      else
        kernels_[launch.kernel](in.data(), out.data());
      return absl::OkStatus();
    };
    auto check = [&]() -> Status {
      for (int j = 0; j < launch.results; ++j) {
        const Program::Buffer &buffer = program_.buffers[launch.outputs[j]];
        int64_t e = firstNonFinite(static_cast<const uint8_t *>(out[j]), buffer, infinities, what);
        if (e >= 0)
          return absl::OutOfRangeError(absl::StrCat(
              "launch ", launchIndex, " of ", launchCount, " (", describeLaunch(launch), ") wrote ",
              what, " at element ", e, " of its result ", j, " (", elementsOf(buffer),
              "); every input it read was checked and had none"));
      }
      return absl::OkStatus();
    };
    if (!profiling) {
      SINTER_RETURN_IF_ERROR(run());
      if (options.checkNumerics > 0)
        SINTER_RETURN_IF_ERROR(check());
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    SINTER_RETURN_IF_ERROR(run());
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    {
      ProfileTable &table = profileTable();
      std::lock_guard<std::mutex> lock(table.mutex);
      profileRows_[s]->seconds += seconds;
      profileRows_[s]->launches += 1;
    }
    if (options.checkNumerics > 0)
      SINTER_RETURN_IF_ERROR(check());
  }
  if (kPoisoning)
    unpoison(arenaBegin, program_.arenaBytes);
  // Results in the arena become blocks of their own (Note [Results in the
  // arena]); the others were written in place or by a copy step.
  for (size_t i = 0; i < results.size(); ++i)
    if (program_.inArena[i])
      results[i] = at[program_.results[i]];
  if (!handedOut_.empty())
    allocator.split(arena.release(), handedOut_);
  return absl::OkStatus();
}

} // namespace sinter::runtime
