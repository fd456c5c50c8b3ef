//===- Tensor.cpp - tensor handles, creation, evaluation, mark_step -------===//
#include "TensorImpl.h"
#include "common/philox.h"
#include "sinter/Compiler.h"
#include "sinter/Error.h"
#include "sinter/Metrics.h"
#include "sinter/Reference.h"
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/ByteCount.h"

#include "Format.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

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

std::atomic<uint64_t> globalSeed{0x5EED5EEDull};
std::atomic<uint64_t> nextStream{0};
thread_local bool gradMode = true;

const TensorImpl &implOf(const Tensor &tensor, Loc loc) {
  SINTER_CHECK(tensor.defined(), loc, "the tensor is undefined");
  return *tensor.impl();
}

template <typename T> DType dtypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::boolean;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::i64;
  else
    return DType::f32;
}

} // namespace

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
  auto impl = std::make_shared<TensorImpl>();
  impl->node = std::move(node);
  registerTensor(impl);
  return Tensor(std::move(impl));
}

Tensor detail::fromValue(std::shared_ptr<const lazy::Value> value, Shape shape, DType dtype,
                         Device device, Loc loc) {
  Tensor tensor = record(lazy::Op::Data, {}, {}, std::move(shape), dtype, device, loc);
  tensor.impl()->node->value = std::move(value);
  return tensor;
}

const Shape &Tensor::shape() const { return implOf(*this, Loc::current()).node->shape; }
int64_t Tensor::dim() const { return static_cast<int64_t>(shape().size()); }
int64_t Tensor::numel() const { return sinter::numel(shape()); }
DType Tensor::dtype() const { return implOf(*this, Loc::current()).node->dtype; }
Device Tensor::device() const { return implOf(*this, Loc::current()).node->device; }

int64_t Tensor::size(int64_t d, Loc loc) const {
  int64_t rank = implOf(*this, loc).node->shape.size();
  SINTER_CHECK(d >= -rank && d < rank, loc,
               cat("size: dimension ", d, " is out of range for a tensor of shape ",
                   sinter::toString(shape())));
  return shape()[d < 0 ? d + rank : d];
}

namespace {
std::shared_ptr<const lazy::Value> valueOf(const Tensor &tensor, Loc loc);
thread_local bool forceReference = false;
} // namespace

reference::ReferenceGuard::ReferenceGuard() : previous_(forceReference) { forceReference = true; }
reference::ReferenceGuard::~ReferenceGuard() { forceReference = previous_; }

template <typename T> std::vector<T> Tensor::to_vector(Loc loc) const {
  implOf(*this, loc);
  std::shared_ptr<const lazy::Value> value = valueOf(*this, loc);
  std::vector<T> out;
  out.reserve(value->size());
  for (double x : value->elements()) {
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
  SINTER_CHECK(implOf(*this, loc).node && numel() == 1, loc,
               cat("item: the tensor has shape ", sinter::toString(shape()), " (", numel(),
                   " elements), not one element"));
  return to_vector<T>(loc)[0];
}

template <typename T>
Tensor from_vector(const std::vector<T> &values, const Shape &shape, std::optional<DType> dtype,
                   Loc loc) {
  for (int64_t size : shape)
    SINTER_CHECK(size >= 0, loc, "from_vector: negative size in shape " + toString(shape));
  SINTER_CHECK(static_cast<int64_t>(values.size()) == numel(shape), loc,
               cat("from_vector: ", values.size(), " values cannot fill shape ", toString(shape),
                   " (", numel(shape), " elements)"));
  DType type = dtype.value_or(dtypeOf<T>());
  std::vector<double> elements;
  elements.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    elements.push_back(detail::roundTo(type, static_cast<double>(values[i])));
  auto value = std::make_shared<lazy::Value>(std::move(elements), type);
  return detail::fromValue(std::move(value), shape, type, Device::cpu(), loc);
}

#define SINTER_INSTANTIATE(T)                                                                      \
  template std::vector<T> Tensor::to_vector<T>(Loc) const;                                         \
  template T Tensor::item<T>(Loc) const;                                                           \
  template Tensor from_vector<T>(const std::vector<T> &, const Shape &, std::optional<DType>, Loc);
SINTER_INSTANTIATE(float)
SINTER_INSTANTIATE(double)
SINTER_INSTANTIATE(int32_t)
SINTER_INSTANTIATE(int64_t)
SINTER_INSTANTIATE(bool)
#undef SINTER_INSTANTIATE

namespace {
void checkShape(const char *op, const Shape &shape, Loc loc) {
  for (int64_t size : shape)
    SINTER_CHECK(size >= 0, loc, cat(op, ": negative size in shape ", toString(shape)));
}
} // namespace

Tensor full(const Shape &shape, double value, DType dtype, Loc loc) {
  checkShape("full", shape, loc);
  lazy::Attrs attrs;
  attrs.value = detail::roundTo(dtype, value);
  return detail::record(lazy::Op::Full, std::move(attrs), {}, shape, dtype, Device::cpu(), loc);
}

Tensor zeros(const Shape &shape, DType dtype, Loc loc) { return full(shape, 0.0, dtype, loc); }
Tensor ones(const Shape &shape, DType dtype, Loc loc) { return full(shape, 1.0, dtype, loc); }

void manual_seed(uint64_t seed) {
  globalSeed.store(seed);
  nextStream.store(0);
}

RngState get_rng_state() { return {globalSeed.load(), nextStream.load()}; }

void set_rng_state(const RngState &state) {
  globalSeed.store(state.seed);
  nextStream.store(state.stream);
}

static Tensor random(const char *op, const Shape &shape, DType dtype, uint8_t kind, Loc loc) {
  checkShape(op, shape, loc);
  SINTER_CHECK(isFloatingPoint(dtype), loc,
               cat(op, ": dtype must be floating point, got ", name(dtype)));
  lazy::Attrs attrs;
  attrs.kind = kind;
  // The key is data, not an attribute: every step draws new numbers from the
  // same compiled program.
  int64_t key =
      static_cast<int64_t>(kernels::randomKey(globalSeed.load(), nextStream.fetch_add(1)));
  Tensor keyData = from_vector<int64_t>({key}, {}, DType::i64, loc);
  return detail::record(lazy::Op::Random, std::move(attrs), {keyData.impl()->node}, shape, dtype,
                        Device::cpu(), loc);
}

Tensor rand(const Shape &shape, DType dtype, Loc loc) {
  return random("rand", shape, dtype, 0, loc);
}
Tensor randn(const Shape &shape, DType dtype, Loc loc) {
  return random("randn", shape, dtype, 1, loc);
}

lazy::NodePtr lazy::node_of(const Tensor &tensor) {
  SINTER_CHECK(tensor.defined(), Loc::current(), "node_of: the tensor is undefined");
  return tensor.impl()->node;
}

int64_t reference::live_node_count() { return lazy::Node::liveCount(); }

Tensor detail::wrap(lazy::NodePtr node) {
  auto impl = std::make_shared<TensorImpl>();
  impl->node = std::move(node);
  registerTensor(impl);
  return Tensor(std::move(impl));
}

bool grad_enabled() { return gradMode; }
NoGradGuard::NoGradGuard() : previous_(gradMode) { gradMode = false; }
NoGradGuard::~NoGradGuard() { gradMode = previous_; }

namespace {

/// A copy of a graph's structure without its values, to compare the next
/// step's graph with after this one is freed.
std::vector<lazy::NodePtr> skeleton(const std::vector<lazy::NodePtr> &outputs) {
  std::unordered_map<const lazy::Node *, lazy::NodePtr> copies;
  for (const lazy::Node *node : lazy::topological_order(outputs)) {
    auto copy = std::make_shared<lazy::Node>();
    copy->op = node->op;
    copy->attrs = node->attrs;
    copy->shape = node->shape;
    copy->dtype = node->dtype;
    copy->device = node->device;
    copy->loc = node->loc;
    for (const lazy::NodePtr &operand : node->operands)
      copy->operands.push_back(copies.at(operand.get()));
    copies[node] = std::move(copy);
  }
  std::vector<lazy::NodePtr> result;
  for (const lazy::NodePtr &output : outputs)
    result.push_back(copies.at(output.get()));
  return result;
}

struct StepSite {
  std::vector<lazy::NodePtr> lastGraph;
  uint64_t lastHash = 0;
  std::unordered_set<uint64_t> hashes;
  bool warned = false;
  /// Per data node of the last compiled graph (topological order), whether
  /// its memory could be given to a result (Note [Donation]); the graph
  /// structures and donation masks compiled so far.
  uint64_t lastDonationStructure = 0;
  std::vector<bool> lastDonation;
  std::set<std::pair<uint64_t, std::vector<bool>>> donations;
};

struct MetricsState {
  std::mutex mutex;
  Metrics metrics;
  std::unordered_set<uint64_t> seen;
  std::map<std::string, StepSite> sites;
};

MetricsState &metricsState() {
  static MetricsState *state = new MetricsState();
  return *state;
}

int debugLevel() { return compiler_config().debug; }

/// Counts this step's graph and, when the step at `loc` changed structure,
/// says why.
uint64_t recordStep(const std::vector<lazy::NodePtr> &outputs, Loc loc) {
  uint64_t hash = lazy::structural_hash(outputs);
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  ++state.metrics.steps;
  bool fresh = state.seen.insert(hash).second;
  ++(fresh ? state.metrics.distinct_graphs : state.metrics.repeated_graphs);
  std::string key = cat(loc.file_name(), ":", loc.line());
  StepSite &site = state.sites[key];
  if (!site.lastGraph.empty() && site.lastHash != hash && fresh) {
    std::string reason =
        cat("mark_step at ", key, ": ", lazy::first_difference(site.lastGraph, outputs));
    state.metrics.recompile_reasons.push_back(reason);
    if (debugLevel() >= 1)
      std::fprintf(stderr, "sinter: new graph structure, %s\n", reason.c_str());
  }
  site.hashes.insert(hash);
  if (!site.warned && static_cast<int64_t>(site.hashes.size()) > kRecompileWarningLimit) {
    site.warned = true;
    std::fprintf(stderr,
                 "sinter: warning: the step at %s has recorded %zu different graphs; each one is "
                 "compiled separately. Keep shapes fixed and pass changing values as tensors "
                 "(see sinter::metrics_report()).\n",
                 key.c_str(), site.hashes.size());
  }
  if (site.lastHash != hash) {
    site.lastGraph = skeleton(outputs);
    site.lastHash = hash;
  }
  return hash;
}

/// A compiled step is compiled again when the same graph gives other inputs'
/// memory to its results (Note [Donation]: a value held outside the step is
/// never written over). Says which input changed, once per new combination.
/// `inputs`: the step's data nodes (topological order); `mask`: per input,
/// whether its memory may be given to a result.
void recordDonation(uint64_t structure, const std::vector<const lazy::Node *> &inputs,
                    std::vector<bool> mask, Loc loc) {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  std::string key = cat(loc.file_name(), ":", loc.line());
  StepSite &site = state.sites[key];
  bool fresh = site.donations.insert({structure, mask}).second;
  if (fresh && structure == site.lastDonationStructure && site.lastDonation != mask) {
    size_t i = 0;
    while (site.lastDonation[i] == mask[i])
      ++i;
    const lazy::Node &input = *inputs[i];
    std::string reason =
        cat("mark_step at ", key, ": the same graph, but input ", i, " (", name(input.dtype),
            sinter::toString(input.shape), ", from ", input.loc.file_name(), ":", input.loc.line(),
            ") is ",
            mask[i] ? "no longer held outside the step, so its update may take its memory"
                    : "now held outside the step (a tensor still refers to it), so its update "
                      "needs memory of its own");
    state.metrics.recompile_reasons.push_back(reason);
    if (debugLevel() >= 1)
      std::fprintf(stderr, "sinter: new donation of inputs, %s\n", reason.c_str());
  }
  site.lastDonationStructure = structure;
  site.lastDonation = std::move(mask);
}

} // namespace

Metrics metrics() {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.metrics;
}

void reset_metrics() {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.metrics = Metrics();
  state.seen.clear();
  state.sites.clear();
}

CompileSeconds &CompileSeconds::operator+=(const CompileSeconds &other) {
  lower += other.lower;
  passes += other.passes;
  codegen += other.codegen;
  build += other.build;
  return *this;
}

std::string metrics_report() {
  Metrics m = metrics();
  std::string report =
      cat("steps: ", m.steps, " (compiled: ", m.compiled_steps, ", eager: ", m.eager_steps,
          ", reference: ", m.steps - m.compiled_steps - m.eager_steps, ")",
          "\ndistinct graphs: ", m.distinct_graphs,
          "\nrepeated graphs (cache hits): ", m.repeated_graphs, "\ncompilations: ", m.compilations,
          " (kernel libraries from disk: ", m.disk_cache_hits, ")",
          "\ncompile time: ", m.compile.total(), " s (lower ", m.compile.lower, ", passes ",
          m.compile.passes, ", codegen ", m.compile.codegen, ", build ", m.compile.build, ")",
          "\nexecute time: ", m.execute_seconds, " s", "\nkernels launched: ", m.kernels_launched,
          "\n");
  if (const StepMemory &memory = m.last_step_memory; memory.planned_peak_bytes > 0)
    report +=
        cat("last compiled step's memory: ", memory.planned_peak_bytes, " bytes planned (arena ",
            memory.arena_bytes, ", results ", memory.result_bytes, "), ",
            memory.measured_peak_bytes, " measured, on top of ", memory.persistent_bytes,
            " bytes of inputs; ", memory.recomputed_values, " values recomputed instead of kept (",
            memory.recompute_operations, " extra operations)\n");
  for (const std::string &reason : m.recompile_reasons)
    report += cat("recompiled: ", reason, "\n");
  if (m.fallbacks > 0)
    report += cat("fallbacks to the reference executor: ", m.fallbacks, "\n");
  for (const std::string &reason : m.fallback_reasons)
    report += cat("ran on the reference executor: ", reason, "\n");
  return report;
}

namespace {
struct CompilerState {
  std::mutex mutex;
  CompilerConfig config = [] {
    CompilerConfig config;
    if (const char *value = std::getenv("SINTER_COMPILER")) {
      std::string mode = value;
      if (mode != "1" && mode != "0" && mode != "reference")
        std::fprintf(stderr,
                     "sinter: warning: SINTER_COMPILER='%s' is not 1 (compiled), 0 (eager) or "
                     "reference; steps run compiled\n",
                     value);
      config.enabled = mode != "0";
      config.use_reference = mode == "reference";
    }
    if (const char *value = std::getenv("SINTER_DEBUG")) {
      char *end = nullptr;
      long level = std::strtol(value, &end, 10);
      if (end == value || *end != '\0' || level < 0 || level > 4)
        std::fprintf(stderr, "sinter: warning: SINTER_DEBUG='%s' is not a level from 0 to 4\n",
                     value);
      else
        config.debug = static_cast<int>(level);
    }
    if (const char *value = std::getenv("SINTER_DUMP_DIR"))
      config.dump_dir = value;
    if (const char *value = std::getenv("SINTER_CHECK_NUMERICS"); value != nullptr && *value) {
      std::string level = value;
      if (level != "0" && level != "1" && level != "2")
        std::fprintf(stderr,
                     "sinter: warning: SINTER_CHECK_NUMERICS='%s' is not 0 (off), 1 (NaN) or 2 "
                     "(NaN and infinities); numerics are not checked\n",
                     value);
      else
        config.check_numerics = level[0] - '0';
    }
    if (const char *value = std::getenv("SINTER_MEMORY_BUDGET"); value != nullptr && *value) {
      int64_t bytes = runtime::parseByteCount(value);
      if (bytes < 0)
        std::fprintf(stderr,
                     "sinter: warning: SINTER_MEMORY_BUDGET='%s' is not a number of bytes "
                     "(optionally with KiB, MiB or GiB); no budget\n",
                     value);
      else
        config.memory_budget = bytes;
    }
    return config;
  }();
  std::shared_ptr<detail::StepCompiler> compiler;
};
CompilerState &compilerState() {
  static CompilerState *state = new CompilerState();
  return *state;
}
} // namespace

void set_compiler_config(const CompilerConfig &config, std::source_location where) {
  SINTER_CHECK(config.memory_budget >= 0, where,
               "CompilerConfig::memory_budget is " + std::to_string(config.memory_budget) +
                   " bytes; it must be 0 (no budget) or positive");
  SINTER_CHECK(config.check_numerics >= 0 && config.check_numerics <= 2, where,
               "CompilerConfig::check_numerics is " + std::to_string(config.check_numerics) +
                   "; it must be 0 (off), 1 (NaN) or 2 (NaN and infinities)");
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  compilerState().config = config;
}

CompilerConfig compiler_config() {
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  return compilerState().config;
}

void detail::register_step_compiler(std::shared_ptr<StepCompiler> compiler) {
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  compilerState().compiler = std::move(compiler);
}

std::shared_ptr<detail::StepCompiler> detail::step_compiler() {
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  return compilerState().compiler;
}

namespace {

void printMetricsAtExit() { std::fprintf(stderr, "sinter metrics:\n%s", metrics_report().c_str()); }

/// Note [Fallbacks are said]: counts a step or read that the compiler could
/// not compile, says why on stderr the first time for each reason, and
/// throws instead when `config` allows no fallback.
void noteFallback(const std::string &why, const CompilerConfig &config, const char *what, Loc loc) {
  if (!config.allow_fallback)
    throwError(cat(what,
                   " cannot be compiled, and fallbacks to the reference executor are not "
                   "allowed (CompilerConfig::allow_fallback; a job's "
                   "compiler_config.allow_fallback): ",
                   why),
               loc);
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  ++state.metrics.fallbacks;
  std::vector<std::string> &reasons = state.metrics.fallback_reasons;
  if (std::find(reasons.begin(), reasons.end(), why) != reasons.end())
    return;
  reasons.push_back(why);
  std::fprintf(stderr,
               "sinter: warning: %s at %s:%u runs on the reference executor (far slower than "
               "compiled): %s\n",
               what, loc.file_name(), loc.line(), why.c_str());
}

/// Note [Donation] (the frontend's half; the compiler's is in
/// compiler/lib/Compiler/Pipeline.cpp): the data nodes of a step that die
/// with it, whose memory the step's results may take. mark_step() re-points
/// every pending tensor at a new data node and drops the graph, so a node
/// survives the step only if something outside the graph holds it (a tensor,
/// a gradient function kept for a later backward, a node of another graph)
/// or holds a node that reaches it. Counting each node's references from
/// inside the graph and from mark_step itself finds those holders; a value
/// whose memory another value shares is never given away either.
/// With `inputs` and `given`, also every data node (topological order) and
/// whether it is donatable.
std::vector<const lazy::Node *> donatableInputs(const std::vector<lazy::NodePtr> &outputs,
                                                std::vector<const lazy::Node *> *inputs = nullptr,
                                                std::vector<bool> *given = nullptr) {
  std::vector<const lazy::Node *> order = lazy::topological_order(outputs);
  std::unordered_map<const lazy::Node *, long> inside, held;
  for (const lazy::Node *node : order)
    for (const lazy::NodePtr &operand : node->operands) {
      ++inside[operand.get()];
      held[operand.get()] = operand.use_count();
    }
  for (const lazy::NodePtr &output : outputs) {
    inside[output.get()] += 2; // its pending tensor's handle and `outputs`
    held[output.get()] = output.use_count();
  }
  std::unordered_set<const lazy::Node *> survives;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const lazy::Node *node = *it;
    if (held[node] > inside[node])
      survives.insert(node);
    if (survives.count(node))
      for (const lazy::NodePtr &operand : node->operands)
        survives.insert(operand.get());
  }
  std::vector<const lazy::Node *> donatable;
  for (const lazy::Node *node : order) {
    if (node->op != lazy::Op::Data)
      continue;
    bool dies = !survives.count(node) && node->value && node->value.use_count() == 1 &&
                node->value->sharedBytes().use_count() == 1;
    if (dies)
      donatable.push_back(node);
    if (inputs != nullptr)
      inputs->push_back(node);
    if (given != nullptr)
      given->push_back(dies);
  }
  return donatable;
}

/// Computes `outputs` (whose structure hash is `structure`) with the
/// installed step compiler, as one compiled program or op by op as `config`
/// says; false with the reason when it cannot.
bool runWithCompiler(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
                     const CompilerConfig &config, const std::vector<const lazy::Node *> &donatable,
                     std::vector<std::shared_ptr<const lazy::Value>> &values, StepMetrics &step,
                     std::string &why) {
  std::shared_ptr<detail::StepCompiler> compiler = detail::step_compiler();
  if (compiler == nullptr) {
    why = "no step compiler is installed (link Sinter's compiler library and call "
          "sinter::compiler::install())";
    return false;
  }
  return config.enabled ? compiler->run(outputs, structure, config, donatable, values, step, why)
                        : compiler->run_eager(outputs, config, values, step, why);
}

/// Adds what one run did to the metrics: `seconds` in all, of which its
/// compilations' time is counted as compiling, the rest as executing.
void addRun(const StepMetrics &step, double seconds) {
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  Metrics &m = state.metrics;
  m.execute_seconds += std::max(0.0, seconds - step.compile.total());
  m.compilations += step.compilations;
  m.disk_cache_hits += step.disk_cache_hits;
  m.compile += step.compile;
  m.kernels_launched += step.kernels_launched;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Every live tensor that is not computed yet: what mark_step() computes.
std::vector<std::shared_ptr<TensorImpl>> pendingTensors() {
  std::vector<std::shared_ptr<TensorImpl>> pending;
  LiveTensors &live = liveTensors();
  std::lock_guard<std::mutex> lock(live.mutex);
  for (const std::weak_ptr<TensorImpl> &weak : live.tensors)
    if (std::shared_ptr<TensorImpl> impl = weak.lock(); impl && impl->node->op != lazy::Op::Data)
      pending.push_back(std::move(impl));
  return pending;
}

} // namespace

StepMemory plan_step(PlanOptions options, Loc loc) {
  std::vector<std::shared_ptr<TensorImpl>> pending = pendingTensors();
  StepMemory memory;
  if (pending.empty())
    return memory;
  std::vector<lazy::NodePtr> outputs;
  for (const std::shared_ptr<TensorImpl> &impl : pending)
    outputs.push_back(impl->node);
  std::shared_ptr<detail::StepCompiler> compiler = detail::step_compiler();
  SINTER_CHECK(compiler != nullptr, loc,
               "plan_step: no step compiler is installed (link Sinter's compiler library and "
               "call sinter::compiler::install())");
  auto start = std::chrono::steady_clock::now();
  StepMetrics step;
  std::string why;
  bool planned = compiler->plan(outputs, lazy::structural_hash(outputs), compiler_config(),
                                donatableInputs(outputs), options.build_kernels, memory, step, why);
  addRun(step, secondsSince(start));
  SINTER_CHECK(planned, loc, "plan_step: the step cannot be compiled: " + why);
  return memory;
}

void mark_step(Loc loc) {
  std::vector<std::shared_ptr<TensorImpl>> pending = pendingTensors();
  if (pending.empty())
    return;
  std::vector<lazy::NodePtr> outputs;
  for (const std::shared_ptr<TensorImpl> &impl : pending)
    outputs.push_back(impl->node);
  uint64_t structure = recordStep(outputs, loc);
  CompilerConfig config = compiler_config();
  static std::once_flag atExit;
  if (config.debug >= 1)
    std::call_once(atExit, [] { std::atexit(printMetricsAtExit); });

  auto start = std::chrono::steady_clock::now();
  StepMetrics step;
  bool compiled = false;
  if (!config.use_reference) {
    std::vector<std::shared_ptr<const lazy::Value>> values;
    std::string why;
    // Eager steps run op by op and give no memory away: no need to look.
    std::vector<const lazy::Node *> donatable;
    if (config.enabled) {
      std::vector<const lazy::Node *> inputs;
      std::vector<bool> given;
      donatable = donatableInputs(outputs, &inputs, &given);
      recordDonation(structure, inputs, std::move(given), loc);
    }
    compiled = runWithCompiler(outputs, structure, config, donatable, values, step, why);
    if (step.out_of_memory) // nothing ran: the tensors are still pending
      throwError("mark_step: " + why, loc);
    if (step.non_finite) // stopped at the kernel; the tensors are still pending
      throwError(cat("mark_step: step ", metrics().steps, ": ", why), loc);
    if (compiled)
      for (size_t i = 0; i < pending.size(); ++i)
        pending[i]->node->value = values[i];
    else
      noteFallback(why, config, "the step", loc);
  }
  // Compute everything first (shared subgraphs once), then cut the graph:
  // each live tensor becomes data, and the recorded history is freed.
  if (!compiled)
    for (const std::shared_ptr<TensorImpl> &impl : pending)
      detail::evaluate(Tensor(impl));
  for (const std::shared_ptr<TensorImpl> &impl : pending) {
    auto data = std::make_shared<lazy::Node>();
    data->op = lazy::Op::Data;
    data->shape = impl->node->shape;
    data->dtype = impl->node->dtype;
    data->device = impl->node->device;
    data->loc = impl->node->loc;
    data->value = impl->node->value;
    impl->node = std::move(data);
  }
  addRun(step, secondsSince(start));
  MetricsState &state = metricsState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (compiled && config.enabled)
    state.metrics.last_step_memory = step.memory;
  state.metrics.compiled_steps += compiled && config.enabled;
  state.metrics.eager_steps += compiled && !config.enabled;
}

namespace {

/// The value of a tensor that is read (to_vector, item, printing), at the
/// user's `loc`: computed the way mark_step() would compute it (compiled or
/// eager, as configured; the graph of this tensor alone, cached by its
/// structure like a step), or on the reference executor when so configured
/// or when the compiler cannot.
/// The graph is not cut: the next mark_step() computes the step as a whole.
std::shared_ptr<const lazy::Value> valueOf(const Tensor &tensor, Loc loc) {
  const lazy::NodePtr &node = tensor.impl()->node;
  if (node->value)
    return node->value;
  CompilerConfig config = compiler_config();
  if (forceReference || config.use_reference || detail::step_compiler() == nullptr)
    return detail::evaluate(tensor);
  std::vector<lazy::NodePtr> outputs = {node};
  std::vector<std::shared_ptr<const lazy::Value>> values;
  StepMetrics step;
  std::string why;
  auto start = std::chrono::steady_clock::now();
  // The graph stays (only mark_step cuts it): nothing is given away.
  bool ran =
      runWithCompiler(outputs, lazy::structural_hash(outputs), config, {}, values, step, why);
  addRun(step, secondsSince(start));
  if (step.out_of_memory)
    throwError("reading a tensor: " + why, loc);
  if (step.non_finite)
    throwError("reading a tensor: " + why, loc);
  if (!ran) {
    noteFallback(why, config, "reading a tensor", loc);
    return detail::evaluate(tensor);
  }
  node->value = values.front();
  return node->value;
}

} // namespace

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
