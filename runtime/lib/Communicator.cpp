//===- Communicator.cpp - names, reductions, the world of one, the queue ---===//
//
// Note [The communicator] in sinter/runtime/Communicator.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Communicator.h"

#include "CollectiveOrder.h"
#include "QueuedCommunicator.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <mutex>
#include <vector>

namespace sinter::runtime {

namespace {

constexpr std::array<std::string_view, 4> kReduceOpNames = {"sum", "mean", "max", "min"};
constexpr std::array<std::string_view, 7> kElementTypeNames = {"f32", "f64", "f16", "bf16",
                                                               "i32", "i64", "bool"};

// f16 and bf16 are reduced in f32 and rounded back once per pair, as NCCL
// does.
float fromBf16(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
uint16_t toBf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40); // a quiet NaN stays a NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);               // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
float fromF16(uint16_t bits) { return static_cast<float>(std::bit_cast<_Float16>(bits)); }
uint16_t toF16(float value) { return std::bit_cast<uint16_t>(static_cast<_Float16>(value)); }

template <typename T> T combine(T a, T b, ReduceOp op) {
  switch (op) {
  case ReduceOp::Max:
    return b > a ? b : a;
  case ReduceOp::Min:
    return b < a ? b : a;
  default:
    return a + b;
  }
}

template <typename T> void reduceArray(T *into, const T *from, int64_t count, ReduceOp op) {
  for (int64_t i = 0; i < count; ++i)
    into[i] = combine(into[i], from[i], op);
}

template <float (*load)(uint16_t), uint16_t (*store)(float)>
void reduceHalves(uint16_t *into, const uint16_t *from, int64_t count, ReduceOp op) {
  for (int64_t i = 0; i < count; ++i)
    into[i] = store(combine(load(into[i]), load(from[i]), op));
}

} // namespace

std::string_view reduceOpName(ReduceOp op) { return kReduceOpNames[static_cast<size_t>(op)]; }

StatusOr<ReduceOp> reduceOpNamed(std::string_view name) {
  for (size_t i = 0; i < kReduceOpNames.size(); ++i)
    if (kReduceOpNames[i] == name)
      return static_cast<ReduceOp>(i);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown reduction '", std::string(name), "': expected sum, mean, max or min"));
}

std::string_view elementTypeName(ElementType type) {
  return kElementTypeNames[static_cast<size_t>(type)];
}

StatusOr<ElementType> elementTypeNamed(std::string_view name) {
  for (size_t i = 0; i < kElementTypeNames.size(); ++i)
    if (kElementTypeNames[i] == name)
      return static_cast<ElementType>(i);
  return absl::InvalidArgumentError(
      absl::StrCat("collectives do not take elements of type '", std::string(name), "'"));
}

int64_t elementBytes(ElementType type) {
  switch (type) {
  case ElementType::F64:
  case ElementType::I64:
    return 8;
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::Bool:
    return 1;
  default:
    return 4;
  }
}

void reduceInto(void *into, const void *from, int64_t count, ElementType type, ReduceOp op) {
  switch (type) {
  case ElementType::F32:
    return reduceArray(static_cast<float *>(into), static_cast<const float *>(from), count, op);
  case ElementType::F64:
    return reduceArray(static_cast<double *>(into), static_cast<const double *>(from), count, op);
  case ElementType::I32:
    return reduceArray(static_cast<int32_t *>(into), static_cast<const int32_t *>(from), count, op);
  case ElementType::I64:
    return reduceArray(static_cast<int64_t *>(into), static_cast<const int64_t *>(from), count, op);
  case ElementType::F16:
    return reduceHalves<fromF16, toF16>(static_cast<uint16_t *>(into),
                                        static_cast<const uint16_t *>(from), count, op);
  case ElementType::BF16:
    return reduceHalves<fromBf16, toBf16>(static_cast<uint16_t *>(into),
                                          static_cast<const uint16_t *>(from), count, op);
  case ElementType::Bool: {
    // Sum and Max are "any", Min is "all".
    auto *a = static_cast<uint8_t *>(into);
    const auto *b = static_cast<const uint8_t *>(from);
    for (int64_t i = 0; i < count; ++i)
      a[i] = op == ReduceOp::Min ? (a[i] && b[i]) : (a[i] || b[i]);
    return;
  }
  }
}

void divideBy(void *data, int64_t count, ElementType type, int divisor) {
  auto each = [&](auto *values) {
    for (int64_t i = 0; i < count; ++i)
      values[i] = static_cast<std::remove_reference_t<decltype(values[i])>>(values[i] / divisor);
  };
  switch (type) {
  case ElementType::F32:
    return each(static_cast<float *>(data));
  case ElementType::F64:
    return each(static_cast<double *>(data));
  case ElementType::F16:
  case ElementType::BF16: {
    auto *values = static_cast<uint16_t *>(data);
    for (int64_t i = 0; i < count; ++i)
      values[i] = type == ElementType::F16 ? toF16(fromF16(values[i]) / float(divisor))
                                           : toBf16(fromBf16(values[i]) / float(divisor));
    return;
  }
  default:
    return; // refused before a collective starts (checkReduction)
  }
}

// Every communicator refuses the same requests (the world of one too, so
// that a program refused on two ranks is refused alone).
Status checkReduction(ElementType type, ReduceOp op) {
  bool floating = type == ElementType::F32 || type == ElementType::F64 ||
                  type == ElementType::F16 || type == ElementType::BF16;
  if (op == ReduceOp::Mean && !floating)
    return absl::InvalidArgumentError(absl::StrCat(
        "a mean over ranks needs floating elements, not ", std::string(elementTypeName(type))));
  return absl::OkStatus();
}

Communicator::~Communicator() { forgetCollectiveOrder(this); }

//===----------------------------------------------------------------------===//
// The world of one
//===----------------------------------------------------------------------===//

namespace {

class LocalCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string_view backend() const override { return "local"; }
  Ticket allReduce(void *, int64_t, ElementType type, ReduceOp op, std::string what) override {
    refuse(checkReduction(type, op), what);
    return 0;
  }
  Ticket broadcast(void *, int64_t, int, std::string) override { return 0; }
  Ticket allGather(const void *input, void *output, int64_t bytes, std::string) override {
    if (input != output)
      std::memmove(output, input, static_cast<size_t>(bytes));
    return 0;
  }
  Ticket reduceScatter(const void *input, void *output, int64_t count, ElementType type,
                       ReduceOp op, std::string what) override {
    refuse(checkReduction(type, op), what);
    return allGather(input, output, count * elementBytes(type), {});
  }
  Ticket barrier(std::string) override { return 0; }
  Status wait(Ticket) override { return health(); }
  void abort(std::string reason) override { refuse(absl::AbortedError(reason), {}); }
  Status health() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return poison_;
  }

private:
  /// The first failure poisons, as on a communicator of many ranks.
  void refuse(const Status &status, const std::string &what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status.ok() && poison_.ok())
      poison_ = what.empty() ? status
                             : Status(status.code(),
                                      absl::StrCat(what, ": ", std::string(status.message())));
  }

  mutable std::mutex mutex_;
  Status poison_;
};

} // namespace

std::unique_ptr<Communicator> localCommunicator() { return std::make_unique<LocalCommunicator>(); }

//===----------------------------------------------------------------------===//
// The queue
//===----------------------------------------------------------------------===//

QueuedCommunicator::QueuedCommunicator(int rank, int size, Options options)
    : rank_(rank), size_(size), options_(options) {
  thread_ = std::thread([this] { serve(); });
}

QueuedCommunicator::~QueuedCommunicator() { stop(); }

void QueuedCommunicator::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && !thread_.joinable())
      return;
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

Communicator::Ticket QueuedCommunicator::enqueue(std::string what, std::function<Status()> run) {
  std::lock_guard<std::mutex> lock(mutex_);
  Ticket ticket = next_++;
  queue_.push_back({ticket, std::move(what), std::move(run)});
  changed_.notify_all();
  return ticket;
}

void QueuedCommunicator::serve() {
  while (true) {
    Work work;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      work = std::move(queue_.front());
      queue_.pop_front();
      if (stopping_ && poison_.ok())
        poison_ = absl::CancelledError("the communicator was destroyed");
      if (!poison_.ok()) {
        done_[work.ticket] = poison_;
        changed_.notify_all();
        continue;
      }
      running_ = work.ticket;
    }
    Status status;
    try {
      status = work.run();
    } catch (const std::exception &error) {
      status = absl::UnavailableError(describeFailure(error.what()));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = 0;
    if (done_.count(work.ticket))
      continue; // aborted while it ran
    if (!status.ok()) {
      if (poison_.ok())
        poison_ =
            Status(status.code(), absl::StrCat(work.what, ": ", std::string(status.message())));
      status = poison_;
    }
    done_[work.ticket] = status;
    changed_.notify_all();
  }
}

Status QueuedCommunicator::wait(Ticket ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Gloo and NCCL enforce the timeout themselves; this is the backstop for
  // a transport that blocks past it.
  auto margin = options_.timeout + std::chrono::seconds(30);
  auto deadline = std::chrono::steady_clock::now() + margin;
  Ticket watched = running_;
  while (!done_.count(ticket)) {
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (done_.count(ticket))
        break;
      if (running_ != 0 && running_ == watched) {
        std::string reason = absl::StrCat("a collective did not complete within ",
                                          std::chrono::duration<double>(margin).count(), " s");
        lock.unlock();
        abort(reason);
        lock.lock();
      }
      watched = running_;
      deadline = std::chrono::steady_clock::now() + margin;
    }
  }
  Status status = std::move(done_[ticket]);
  done_.erase(ticket);
  return status;
}

void QueuedCommunicator::abort(std::string reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (poison_.ok())
      poison_ = absl::AbortedError(absl::StrCat("the communicator was aborted: ", reason));
    // What is queued or running fails now: a transport blocked in a
    // collective (Gloo waits for its peer until its timeout) may return only
    // later, and its result is dropped then.
    if (running_ != 0)
      done_[running_] = poison_;
    for (const Work &work : queue_)
      done_[work.ticket] = poison_;
    queue_.clear();
  }
  interrupt();
  changed_.notify_all();
}

Status QueuedCommunicator::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return poison_;
}

Communicator::Ticket QueuedCommunicator::allReduce(void *data, int64_t count, ElementType type,
                                                   ReduceOp op, std::string what) {
  Status checked = checkReduction(type, op);
  return enqueue(std::move(what), [=, this] {
    SINTER_RETURN_IF_ERROR(checked);
    return runAllReduce(data, count, type, op);
  });
}

Communicator::Ticket QueuedCommunicator::broadcast(void *data, int64_t bytes, int root,
                                                   std::string what) {
  return enqueue(std::move(what), [=, this]() -> Status {
    if (root < 0 || root >= size_)
      return absl::InvalidArgumentError(
          absl::StrCat("broadcast from rank ", root, " in a world of ", size_));
    return runBroadcast(data, bytes, root);
  });
}

Communicator::Ticket QueuedCommunicator::allGather(const void *input, void *output, int64_t bytes,
                                                   std::string what) {
  return enqueue(std::move(what), [=, this] { return runAllGather(input, output, bytes); });
}

Communicator::Ticket QueuedCommunicator::reduceScatter(const void *input, void *output,
                                                       int64_t count, ElementType type, ReduceOp op,
                                                       std::string what) {
  Status checked = checkReduction(type, op);
  return enqueue(std::move(what), [=, this] {
    SINTER_RETURN_IF_ERROR(checked);
    return runReduceScatter(input, output, count, type, op);
  });
}

Communicator::Ticket QueuedCommunicator::barrier(std::string what) {
  return enqueue(std::move(what), [this] { return runBarrier(); });
}

Status QueuedCommunicator::runReduceScatter(const void *input, void *output, int64_t count,
                                            ElementType type, ReduceOp op) {
  int64_t bytes = count * elementBytes(type);
  std::vector<char> whole(static_cast<size_t>(bytes * size_));
  std::memcpy(whole.data(), input, whole.size());
  SINTER_RETURN_IF_ERROR(runAllReduce(whole.data(), count * size_, type, op));
  std::memcpy(output, whole.data() + bytes * rank_, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

} // namespace sinter::runtime
