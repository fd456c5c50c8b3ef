//===- StepSession.cpp - state, inputs and scalars around one Program ------===//
#include "sinter/runtime/StepSession.h"

#include "common/philox.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Files.h"
#include "sinter/runtime/Safetensors.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

namespace sinter::runtime {
namespace {

/// A value's memory: a block of the host allocator or, for a session on a
/// CUDA device, of the device's memory (the state stays there from run to
/// run); freed with it.
struct Block {
  void *data = nullptr;
  CudaDevice *device = nullptr;
  Block() = default;
  Block(void *block, CudaDevice *on) : data(block), device(on) {}
  Block(Block &&other) noexcept : data(other.data), device(other.device) { other.data = nullptr; }
  Block &operator=(Block &&other) noexcept {
    std::swap(data, other.data);
    std::swap(device, other.device);
    return *this;
  }
  ~Block() {
    if (data == nullptr)
      return;
    if (device != nullptr)
      device->deallocate(data);
    else
      HostAllocator::get().deallocate(data);
  }
  /// `bytes` of zeros (one byte at least: every block has an address of its
  /// own) on `device`, or on the host; data is null when there is no room.
  static Block of(int64_t bytes, CudaDevice *device) {
    size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 1));
    if (device != nullptr) {
      StatusOr<void *> memory = device->allocate(static_cast<int64_t>(size));
      if (!memory.ok())
        return {};
      Block block(*memory, device);
      if (!device->fill(block.data, static_cast<int64_t>(size), {0}).ok())
        return {};
      return block;
    }
    Block block(HostAllocator::get().allocate(static_cast<int64_t>(size)), nullptr);
    if (block.data != nullptr)
      std::memset(block.data, 0, size);
    return block;
  }
  /// Copies `bytes` from host memory into the block.
  Status write(const void *from, size_t bytes) {
    if (device != nullptr)
      return device->copyToDevice(data, from, static_cast<int64_t>(bytes));
    std::memcpy(data, from, bytes);
    return absl::OkStatus();
  }
  /// Copies `bytes` of the block into host memory.
  Status read(void *to, size_t bytes) const {
    if (device != nullptr)
      return device->copyToHost(to, data, static_cast<int64_t>(bytes));
    std::memcpy(to, data, bytes);
    return absl::OkStatus();
  }
};

bool isState(Program::Role role) {
  return role == Program::Role::Parameter || role == Program::Role::OptimizerState;
}

/// The safetensors dtype of a signature dtype.
const char *fileDType(const std::string &dtype) {
  if (dtype == "f32")
    return "F32";
  if (dtype == "i32")
    return "I32";
  if (dtype == "i64")
    return "I64";
  if (dtype == "bool")
    return "BOOL";
  if (dtype == "f16")
    return "F16";
  if (dtype == "bf16")
    return "BF16";
  return "?";
}

std::string describe(const Program::Value &value) {
  return absl::StrCat(value.dtype, "[", absl::StrJoin(value.shape, ", "), "]");
}

} // namespace

struct StepSession::Impl {
  Program program;
  /// The CPU's executable, or (a Program of the CUDA target) a CUDA
  /// executable on `device`, where the arguments and results are.
  std::unique_ptr<CpuExecutable> executable;
  std::unique_ptr<CudaExecutable> cuda;
  CudaDevice *device = nullptr;
  Schedule schedule;
  /// Per argument, its memory: state, inputs and scalars alike.
  std::vector<Block> arguments;
  std::vector<bool> inputSet;
  /// Per result after a run, its memory (null for a state result, which
  /// went to its state tensor).
  std::vector<Block> results;
  bool ran = false;

  int argumentNamed(std::string_view name) const {
    const auto &values = program.signature.arguments;
    for (size_t a = 0; a < values.size(); ++a)
      if (values[a].name == name)
        return static_cast<int>(a);
    return -1;
  }
  int resultNamed(std::string_view name) const {
    const auto &values = program.signature.results;
    for (size_t r = 0; r < values.size(); ++r)
      if (values[r].name == name)
        return static_cast<int>(r);
    return -1;
  }
  int64_t argumentBytes(size_t a) const {
    return cuda ? cuda->argumentBytes(a) : executable->argumentBytes(a);
  }
  int64_t resultBytes(size_t r) const {
    return cuda ? cuda->resultBytes(r) : executable->resultBytes(r);
  }
  bool resultInArena(size_t r) const { return !cuda && executable->resultInArena(r); }
  Status runOnce(const std::vector<const void *> &arguments, std::vector<void *> &results,
                 Communicator *communicator) {
    if (cuda)
      return cuda->runOnDevice(arguments, results);
    return executable->run(arguments, results, {.communicator = communicator});
  }
  std::string namesOf(bool (*which)(Program::Role)) const {
    std::vector<std::string> names;
    for (const Program::Value &value : program.signature.arguments)
      if (which(value.role))
        names.push_back(absl::StrCat("'", value.name, "' ", describe(value)));
    return names.empty() ? std::string("none") : absl::StrJoin(names, ", ");
  }
};

StatusOr<std::unique_ptr<StepSession>> StepSession::open(Program program, Schedule schedule,
                                                         int64_t step, CudaDevice *device) {
  if (step < 0)
    return absl::InvalidArgumentError(absl::StrCat("a step count of ", step));
  const Program::Signature &signature = program.signature;
  if (signature.arguments.size() != program.arguments.size() ||
      signature.results.size() != program.results.size())
    return absl::InvalidArgumentError(
        "the program's signature does not name its arguments and results (export it with "
        "sinter::aot)");
  std::set<std::string> stateNames;
  for (const Program::Value &value : signature.arguments) {
    if (value.role == Program::Role::StepScalar && value.dtype != "f32")
      return absl::UnimplementedError(absl::StrCat("step scalar '", value.name, "' is ",
                                                   value.dtype, "; sessions compute f32 scalars"));
    if (value.role == Program::Role::RandomKey && !value.random)
      return absl::InvalidArgumentError(
          absl::StrCat("random key '", value.name,
                       "' has no stream across steps (export the step with sinter::aot)"));
    if (isState(value.role))
      stateNames.insert(value.name);
  }
  // A result named as a state tensor is its new value: the same dtype and
  // shape. A state tensor whose memory a result is written into must get a
  // new value (its old one dies with the step).
  std::set<std::string> updated;
  for (size_t r = 0; r < signature.results.size(); ++r) {
    const Program::Value &result = signature.results[r];
    for (const Program::Value &argument : signature.arguments)
      if (isState(argument.role) && argument.name == result.name) {
        if (argument.dtype != result.dtype || argument.shape != result.shape)
          return absl::InvalidArgumentError(absl::StrCat("result '", result.name, "' is ",
                                                         describe(result),
                                                         " but the state tensor of its "
                                                         "name is ",
                                                         describe(argument)));
        updated.insert(result.name);
      }
  }
  for (size_t r = 0; r < signature.results.size(); ++r)
    if (int donor = program.donors[r]; donor >= 0 && isState(signature.arguments[donor].role) &&
                                       !updated.count(signature.arguments[donor].name))
      return absl::InvalidArgumentError(
          absl::StrCat("result '", signature.results[r].name, "' is written into state tensor '",
                       signature.arguments[donor].name, "', which the step gives no new value"));
  auto impl = std::make_unique<Impl>();
  impl->schedule = schedule;
  if (device != nullptr) {
    StatusOr<std::unique_ptr<CudaExecutable>> cuda = CudaExecutable::load(program, *device);
    SINTER_RETURN_IF_ERROR(cuda.status());
    impl->cuda = std::move(*cuda);
    impl->device = device;
  } else {
    StatusOr<std::unique_ptr<CpuExecutable>> executable = CpuExecutable::load(program);
    SINTER_RETURN_IF_ERROR(executable.status());
    impl->executable = std::move(*executable);
  }
  impl->program = std::move(program);
  for (size_t a = 0; a < impl->program.arguments.size(); ++a) {
    impl->arguments.push_back(Block::of(impl->argumentBytes(a), impl->device));
    if (impl->arguments.back().data == nullptr)
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", impl->argumentBytes(a), " bytes for argument '",
                       impl->program.signature.arguments[a].name, "'"));
  }
  impl->inputSet.assign(impl->arguments.size(), false);
  impl->results.resize(impl->program.results.size());
  std::unique_ptr<StepSession> session(new StepSession());
  session->impl_ = std::move(impl);
  session->step_ = step;
  return session;
}

StepSession::~StepSession() = default;

const Program &StepSession::program() const { return impl_->program; }

Status StepSession::setInput(const std::string &name, const void *data, size_t bytes) {
  int a = impl_->argumentNamed(name);
  if (a < 0 || impl_->program.signature.arguments[a].role != Program::Role::BatchInput)
    return absl::NotFoundError(absl::StrCat(
        "the step has no input '", name, "'; its inputs: ", impl_->namesOf([](Program::Role role) {
          return role == Program::Role::BatchInput;
        })));
  int64_t want = impl_->argumentBytes(a);
  if (static_cast<int64_t>(bytes) != want)
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "' is ",
                                                   describe(impl_->program.signature.arguments[a]),
                                                   ", ", want, " bytes; got ", bytes));
  SINTER_RETURN_IF_ERROR(impl_->arguments[a].write(data, bytes));
  impl_->inputSet[a] = true;
  return absl::OkStatus();
}

Status StepSession::setState(const std::string &name, const void *data, size_t bytes) {
  int a = impl_->argumentNamed(name);
  if (a < 0 || !isState(impl_->program.signature.arguments[a].role))
    return absl::NotFoundError(absl::StrCat(
        "the step has no state tensor '", name,
        "'; its state: ", impl_->namesOf([](Program::Role role) { return isState(role); })));
  int64_t want = impl_->argumentBytes(a);
  if (static_cast<int64_t>(bytes) != want)
    return absl::InvalidArgumentError(absl::StrCat("state tensor '", name, "' is ",
                                                   describe(impl_->program.signature.arguments[a]),
                                                   ", ", want, " bytes; got ", bytes));
  return impl_->arguments[a].write(data, bytes);
}

Status StepSession::run() {
  Impl &s = *impl_;
  const Program &program = s.program;
  const auto &values = program.signature.arguments;
  // Note [Step scalars as formulas]: the learning rate after step_
  // scheduler steps, at optimizer step step_ + 1.
  double lr = s.schedule.at(step_);
  for (size_t a = 0; a < values.size(); ++a) {
    const Program::Value &value = values[a];
    if (value.role == Program::Role::BatchInput && !s.inputSet[a])
      return absl::FailedPreconditionError(
          absl::StrCat("input '", value.name, "' (", describe(value), ") was not set"));
    if (value.role == Program::Role::StepScalar) {
      float scalar = static_cast<float>(value.formula->at(lr, step_ + 1));
      SINTER_RETURN_IF_ERROR(s.arguments[a].write(&scalar, sizeof scalar));
    }
    if (value.role == Program::Role::RandomKey) {
      int64_t key = static_cast<int64_t>(
          kernels::randomKey(value.random->seed, value.random->streamAt(step_)));
      SINTER_RETURN_IF_ERROR(s.arguments[a].write(&key, sizeof key));
    }
  }
  std::vector<const void *> arguments;
  for (const Block &block : s.arguments)
    arguments.push_back(block.data);
  // Donated results are written into their argument's memory; the others
  // into blocks of their own (or the arena's, handed out by the run).
  size_t count = program.results.size();
  std::vector<Block> fresh(count);
  std::vector<void *> results(count, nullptr);
  for (size_t r = 0; r < count; ++r) {
    if (int donor = program.donors[r]; donor >= 0)
      results[r] = s.arguments[donor].data;
    else if (!s.resultInArena(r)) {
      fresh[r] = Block::of(s.resultBytes(r), s.device);
      if (fresh[r].data == nullptr)
        return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", s.resultBytes(r),
                                                         " bytes for result '",
                                                         program.signature.results[r].name, "'"));
      results[r] = fresh[r].data;
    }
  }
  if (Status ran = s.runOnce(arguments, results, communicator_); !ran.ok()) {
    // Updates written into the state's memory (Note [Donation]) may have
    // begun.
    if (!program.writesIntoArguments())
      return ran;
    return Status(ran.code(),
                  absl::StrCat(ran.message(), "; the state may be partly updated: load it again "
                                              "before the next run"));
  }
  for (size_t r = 0; r < count; ++r)
    if (s.resultInArena(r))
      fresh[r] = Block(results[r], nullptr);
  // Each result named as a state tensor is its new value. Its memory is a
  // donated argument's (possibly another state tensor's, whose old value
  // died with the step) or a block of its own: the state takes it over.
  std::vector<Block> old = std::move(s.arguments);
  s.arguments.clear();
  s.arguments.resize(old.size());
  std::vector<int> newValue(old.size(), -1);
  for (size_t r = 0; r < count; ++r) {
    int a = s.argumentNamed(program.signature.results[r].name);
    if (a >= 0 && isState(values[a].role))
      newValue[a] = static_cast<int>(r);
  }
  // First the memory each new value lies in is taken, then what is left
  // stays with its argument: a state tensor no result updates, the inputs
  // and scalars.
  std::vector<bool> taken(old.size(), false);
  std::vector<bool> isNewValue(count, false);
  for (size_t a = 0; a < old.size(); ++a) {
    int r = newValue[a];
    if (r < 0)
      continue;
    isNewValue[r] = true;
    if (int donor = program.donors[r]; donor >= 0) {
      s.arguments[a] = std::move(old[donor]);
      taken[donor] = true;
    } else {
      s.arguments[a] = std::move(fresh[r]);
    }
  }
  // An output written into an argument's memory (an input's: open() refuses
  // a state tensor's without a new value) keeps that memory.
  for (size_t r = 0; r < count; ++r)
    if (int donor = program.donors[r]; donor >= 0 && !isNewValue[r]) {
      fresh[r] = std::move(old[donor]);
      taken[donor] = true;
    }
  for (size_t a = 0; a < old.size(); ++a) {
    if (newValue[a] >= 0)
      continue;
    if (taken[a]) {
      // Its memory went to another state tensor's new value: an input
      // donated this way must be set again.
      s.arguments[a] = Block::of(s.argumentBytes(a), s.device);
      s.inputSet[a] = false;
      if (s.arguments[a].data == nullptr)
        return absl::ResourceExhaustedError(absl::StrCat(
            "cannot allocate ", s.argumentBytes(a), " bytes for input '", values[a].name, "'"));
    } else {
      s.arguments[a] = std::move(old[a]);
    }
  }
  for (size_t r = 0; r < count; ++r)
    s.results[r] = std::move(fresh[r]);
  s.ran = true;
  ++step_;
  return absl::OkStatus();
}

Status StepSession::output(const std::string &name, void *data, size_t bytes) const {
  const Impl &s = *impl_;
  int r = s.resultNamed(name);
  int a = s.argumentNamed(name);
  if (a >= 0 && isState(s.program.signature.arguments[a].role)) {
    if (static_cast<int64_t>(bytes) != s.argumentBytes(a))
      return absl::InvalidArgumentError(
          absl::StrCat("state tensor '", name, "' is ", describe(s.program.signature.arguments[a]),
                       ", ", s.argumentBytes(a), " bytes; got room for ", bytes));
    return s.arguments[a].read(data, bytes);
  }
  if (r < 0) {
    std::vector<std::string> names;
    for (const Program::Value &value : s.program.signature.results)
      names.push_back(absl::StrCat("'", value.name, "' ", describe(value)));
    return absl::NotFoundError(absl::StrCat("the step has no output '", name,
                                            "'; its outputs: ", absl::StrJoin(names, ", ")));
  }
  if (!s.ran)
    return absl::FailedPreconditionError(
        absl::StrCat("output '", name, "' is computed by run(), which has not run yet"));
  if (static_cast<int64_t>(bytes) != s.resultBytes(r))
    return absl::InvalidArgumentError(
        absl::StrCat("output '", name, "' is ", describe(s.program.signature.results[r]), ", ",
                     s.resultBytes(r), " bytes; got room for ", bytes));
  return bytes > 0 ? s.results[r].read(data, bytes) : absl::OkStatus();
}

Status StepSession::load(const std::vector<std::string> &paths) {
  Impl &s = *impl_;
  std::vector<Safetensors> files;
  for (const std::string &path : paths) {
    StatusOr<std::string> bytes = readWholeFile(path, "load");
    SINTER_RETURN_IF_ERROR(bytes.status());
    StatusOr<Safetensors> file = parseSafetensors(std::move(*bytes));
    if (!file.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("load: ", path, ": ", std::string(file.status().message())));
    files.push_back(std::move(*file));
  }
  std::string where = absl::StrJoin(paths, " and ");
  // Everything is checked before anything is copied.
  const auto &values = s.program.signature.arguments;
  std::vector<std::pair<const Safetensors *, const SafetensorsTensor *>> found(values.size());
  for (size_t a = 0; a < values.size(); ++a) {
    if (!isState(values[a].role))
      continue;
    for (const Safetensors &file : files)
      if (const SafetensorsTensor *tensor = file.find(values[a].name)) {
        found[a] = {&file, tensor};
        break;
      }
    const SafetensorsTensor *tensor = found[a].second;
    if (tensor == nullptr)
      return absl::NotFoundError(absl::StrCat("load: ", where, " has no tensor '", values[a].name,
                                              "', which the step needs (", describe(values[a]),
                                              ")"));
    if (tensor->dtype != fileDType(values[a].dtype) || tensor->shape != values[a].shape)
      return absl::InvalidArgumentError(
          absl::StrCat("load: ", where, ": tensor '", values[a].name, "' is ", tensor->dtype, "[",
                       absl::StrJoin(tensor->shape, ", "), "], the step's ",
                       fileDType(values[a].dtype), "[", absl::StrJoin(values[a].shape, ", "), "]"));
  }
  int64_t step = step_;
  for (const Safetensors &file : files) {
    auto it = file.metadata.find("step");
    if (it == file.metadata.end())
      continue;
    // A count: digits only, at most 2^53 (exact in a double, no step count
    // overflows).
    int64_t parsed = -1;
    const std::string &text = it->second;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || parsed < 0 ||
        parsed > (int64_t{1} << 53))
      return absl::InvalidArgumentError(absl::StrCat("load: ", where, ": metadata \"step\" is \"",
                                                     it->second, "\", not a count"));
    step = parsed;
    break;
  }
  for (size_t a = 0; a < values.size(); ++a)
    if (found[a].second != nullptr) {
      std::string_view data = found[a].first->data(*found[a].second);
      SINTER_RETURN_IF_ERROR(s.arguments[a].write(data.data(), data.size()));
    }
  step_ = step;
  return absl::OkStatus();
}

Status StepSession::copyStateFrom(const StepSession &other) {
  Impl &s = *impl_;
  const Impl &o = *other.impl_;
  const auto &values = s.program.signature.arguments;
  int copied = 0;
  for (size_t a = 0; a < values.size(); ++a) {
    if (!isState(values[a].role))
      continue;
    int from = o.argumentNamed(values[a].name);
    if (from < 0 || !isState(o.program.signature.arguments[from].role))
      continue;
    const Program::Value &theirs = o.program.signature.arguments[from];
    if (theirs.dtype != values[a].dtype || theirs.shape != values[a].shape)
      return absl::InvalidArgumentError(absl::StrCat("state tensor '", values[a].name, "' is ",
                                                     describe(values[a]), " here and ",
                                                     describe(theirs), " in the other session"));
    // Through the host: the sessions may be on different devices.
    std::string bytes(static_cast<size_t>(s.argumentBytes(a)), '\0');
    SINTER_RETURN_IF_ERROR(o.arguments[from].read(bytes.data(), bytes.size()));
    SINTER_RETURN_IF_ERROR(s.arguments[a].write(bytes.data(), bytes.size()));
    ++copied;
  }
  if (copied == 0)
    return absl::NotFoundError("the other session holds none of this session's state");
  return absl::OkStatus();
}

Status StepSession::save(const std::string &path,
                         const std::map<std::string, std::string> &metadata) {
  const Impl &s = *impl_;
  std::vector<SafetensorsWrite> tensors;
  const auto &values = s.program.signature.arguments;
  // State on a CUDA device is read into host memory first.
  std::vector<std::string> read(values.size());
  for (size_t a = 0; a < values.size(); ++a) {
    if (!isState(values[a].role))
      continue;
    std::string_view bytes(static_cast<const char *>(s.arguments[a].data),
                           static_cast<size_t>(s.argumentBytes(a)));
    if (s.device != nullptr) {
      read[a].resize(bytes.size());
      SINTER_RETURN_IF_ERROR(s.arguments[a].read(read[a].data(), bytes.size()));
      bytes = read[a];
    }
    tensors.push_back({values[a].name, fileDType(values[a].dtype), values[a].shape, bytes});
  }
  std::map<std::string, std::string> withStep = metadata;
  withStep["step"] = std::to_string(step_);
  withStep["format"] = kSessionCheckpointFormat;
  return writeSafetensors(path, tensors, withStep, "save");
}

} // namespace sinter::runtime
