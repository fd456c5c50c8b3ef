//===- Tensor.cpp - tensor handles, recording, reading values -------------===//
#include "Step.h"
#include "TensorImpl.h"
#include "sinter/Error.h"
#include "sinter/Reference.h"

#include "Format.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <sstream>

namespace sinter {
namespace {

// Every TensorImpl ever made, so that mark_step() can find the live ones.
// Expired entries are swept when the list doubles.
struct LiveTensors {
  std::mutex mutex;
  std::vector<std::weak_ptr<TensorImpl>> tensors;
  size_t sweepAt = 1024;
};

LiveTensors &liveTensors() {
  static LiveTensors *live = new LiveTensors();
  return *live;
}

void registerTensor(const std::shared_ptr<TensorImpl> &impl) {
  LiveTensors &live = liveTensors();
  std::lock_guard<std::mutex> lock(live.mutex);
  if (live.tensors.size() >= live.sweepAt) {
    std::erase_if(live.tensors, [](const std::weak_ptr<TensorImpl> &t) { return t.expired(); });
    live.sweepAt = std::max<size_t>(1024, 2 * live.tensors.size());
  }
  live.tensors.push_back(impl);
}

thread_local bool gradMode = true;

const TensorImpl &implOf(const Tensor &tensor, Loc loc) {
  SINTER_CHECK(tensor.defined(), loc, "the tensor is undefined");
  return *tensor.impl();
}

} // namespace

// Note [Threads and the lazy graph]
// The lazy graph is one per process, as in PyTorch/XLA: mark_step()
// computes every pending tensor, whichever thread recorded it, and replaces
// each one's node by data. Threads record at once (each thread's own
// tensors, or shared ones only read), so a tensor's node is read under the
// shared side of one reader-writer lock (nodeOf), and everything that
// replaces nodes or writes computed values (mark_step, plan_step, reading a
// pending tensor, an AOT export, copy_ and the collectives' in-place
// updates) holds its exclusive side (GraphStep): a step never sees a
// half-recorded op, and no thread reads a node while a step replaces it. An
// op recorded on another thread while a step runs waits for it, and then
// reads the computed data; one recorded just before it is part of it.
// Shape and dtype never change, so they live in the TensorImpl and are read
// without the lock. What a tensor holds beside its node (requires_grad, its
// gradient, its gradient function) is its owner's: see the threading
// contract in sinter/Tensor.h.
namespace {
std::shared_mutex &graphMutex() {
  static std::shared_mutex *mutex = new std::shared_mutex();
  return *mutex;
}
thread_local int graphSteps = 0; // GraphSteps this thread holds
} // namespace

detail::GraphStep::GraphStep() {
  if (graphSteps++ == 0)
    graphMutex().lock();
}

detail::GraphStep::~GraphStep() {
  if (--graphSteps == 0)
    graphMutex().unlock();
}

lazy::NodePtr detail::nodeOf(const TensorImpl &impl) {
  if (graphSteps > 0)
    return impl.node;
  std::shared_lock<std::shared_mutex> lock(graphMutex());
  return impl.node;
}

void detail::setNode(TensorImpl &impl, lazy::NodePtr node) {
  GraphStep hold;
  impl.node = std::move(node);
}

std::shared_ptr<const lazy::Value> detail::knownValue(const TensorImpl &impl) {
  if (graphSteps > 0)
    return impl.node->value;
  std::shared_lock<std::shared_mutex> lock(graphMutex());
  return impl.node->value;
}

// Called by steps, which hold the graph.
std::vector<std::shared_ptr<TensorImpl>> detail::pendingTensors() {
  std::vector<std::shared_ptr<TensorImpl>> pending;
  LiveTensors &live = liveTensors();
  std::lock_guard<std::mutex> lock(live.mutex);
  for (const std::weak_ptr<TensorImpl> &weak : live.tensors)
    if (std::shared_ptr<TensorImpl> impl = weak.lock(); impl && impl->node->op != lazy::Op::Data)
      pending.push_back(std::move(impl));
  return pending;
}

namespace {
thread_local lazy::Phase currentPhase = lazy::Phase::Forward;
} // namespace

PhaseGuard::PhaseGuard(lazy::Phase phase) : previous_(currentPhase) { currentPhase = phase; }
PhaseGuard::~PhaseGuard() { currentPhase = previous_; }

Tensor detail::record(lazy::Op op, lazy::Attrs attrs, std::vector<lazy::NodePtr> operands,
                      Shape shape, DType dtype, Device device, Loc loc) {
  auto node = std::make_shared<lazy::Node>();
  node->phase = currentPhase;
  node->op = op;
  node->attrs = std::move(attrs);
  node->operands = std::move(operands);
  node->shape = std::move(shape);
  node->dtype = dtype;
  node->device = device;
  node->loc = loc;
  auto impl = std::make_shared<TensorImpl>(std::move(node));
  registerTensor(impl);
  return Tensor(std::move(impl));
}

Tensor detail::fromValue(std::shared_ptr<const lazy::Value> value, Shape shape, DType dtype,
                         Device device, Loc loc) {
  Tensor tensor = record(lazy::Op::Data, {}, {}, std::move(shape), dtype, device, loc);
  // No step touches data and no graph holds this node yet: no lock.
  tensor.impl()->node->value = std::move(value);
  return tensor;
}

const Shape &Tensor::shape() const { return implOf(*this, Loc::current()).shape; }
int64_t Tensor::dim() const { return static_cast<int64_t>(shape().size()); }
int64_t Tensor::numel() const { return sinter::numel(shape()); }
DType Tensor::dtype() const { return implOf(*this, Loc::current()).dtype; }
Device Tensor::device() const { return detail::nodeOf(implOf(*this, Loc::current()))->device; }

int64_t Tensor::size(int64_t d, Loc loc) const {
  int64_t rank = implOf(*this, loc).shape.size();
  SINTER_CHECK(d >= -rank && d < rank, loc,
               cat("size: dimension ", d, " is out of range for a tensor of shape ",
                   sinter::toString(shape())));
  return shape()[d < 0 ? d + rank : d];
}

template <typename T> std::vector<T> Tensor::to_vector(Loc loc) const {
  implOf(*this, loc);
  std::shared_ptr<const lazy::Value> value = detail::valueOf(*this, loc);
  std::vector<T> out;
  out.reserve(value->size());
  for (double x : detail::hostElements(*value, loc)) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Saturate instead of the undefined behaviour of an out-of-range cast.
      constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
      constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
      out.push_back(std::isnan(x) ? T(0)
                    : x <= lo     ? std::numeric_limits<T>::min()
                    : x >= hi     ? std::numeric_limits<T>::max()
                                  : static_cast<T>(x));
    } else {
      out.push_back(static_cast<T>(x));
    }
  }
  return out;
}

template <typename T> T Tensor::item(Loc loc) const {
  SINTER_CHECK(numel() == 1, loc,
               cat("item: the tensor has shape ", sinter::toString(shape()), " (", numel(),
                   " elements), not one element"));
  return to_vector<T>(loc)[0];
}

#define SINTER_INSTANTIATE(T)                                                                      \
  template std::vector<T> Tensor::to_vector<T>(Loc) const;                                         \
  template T Tensor::item<T>(Loc) const;
SINTER_ELEMENT_TYPES(SINTER_INSTANTIATE)
#undef SINTER_INSTANTIATE

lazy::NodePtr lazy::node_of(const Tensor &tensor) {
  SINTER_CHECK(tensor.defined(), Loc::current(), "node_of: the tensor is undefined");
  return detail::nodeOf(*tensor.impl());
}

int64_t reference::live_node_count() { return lazy::Node::liveCount(); }

Tensor detail::wrap(lazy::NodePtr node) {
  auto impl = std::make_shared<TensorImpl>(std::move(node));
  registerTensor(impl);
  return Tensor(std::move(impl));
}

bool grad_enabled() { return gradMode; }
NoGradGuard::NoGradGuard() : previous_(gradMode) { gradMode = false; }
NoGradGuard::~NoGradGuard() { gradMode = previous_; }

std::string Tensor::toString() const {
  if (!defined())
    return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor(shape=" << sinter::toString(shape()) << ", dtype=" << name(dtype()) << ", values=[";
  std::vector<double> values = to_vector<double>();
  constexpr size_t kShown = 16;
  for (size_t i = 0; i < values.size() && i < kShown; ++i)
    os << (i > 0 ? ", " : "") << values[i];
  if (values.size() > kShown)
    os << ", ... (" << values.size() << " in all)";
  os << "])";
  return os.str();
}

} // namespace sinter
