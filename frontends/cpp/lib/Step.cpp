//===- Step.cpp - mark_step(): a step's graph to the compiler -------------===//
#include "Step.h"
#include "TensorImpl.h"
#include "sinter/Compiler.h"
#include "sinter/Distributed.h"
#include "sinter/Error.h"
#include "sinter/Metrics.h"
#include "sinter/Reference.h"
#include "sinter/Session.h"
#include "sinter/lazy/Graph.h"

#include "Format.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace sinter {
namespace {

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
                !node->value->memoryShared();
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
  runtime::Communicator *communicator = distributed::detail::current_communicator();
  return config.enabled
             ? compiler->run(outputs, structure, config, donatable, communicator, values, step, why)
             : compiler->run_eager(outputs, config, communicator, values, step, why);
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

thread_local bool forceReference = false;

} // namespace

reference::ReferenceGuard::ReferenceGuard() : previous_(forceReference) { forceReference = true; }
reference::ReferenceGuard::~ReferenceGuard() { forceReference = previous_; }

StepMemory plan_step(PlanOptions options, Loc loc) {
  return Session::current(loc).plan_step(options, loc);
}

void mark_step(Loc loc) { Session::current(loc).mark_step(loc); }

StepMemory Session::plan_step(PlanOptions options, Loc loc) const {
  detail::GraphStep hold;
  std::vector<std::shared_ptr<TensorImpl>> pending = detail::pendingTensors();
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
  bool planned = compiler->plan(outputs, lazy::structural_hash(outputs), settings_.compiler,
                                donatableInputs(outputs), options.build_kernels, memory, step, why);
  detail::addRun(step, secondsSince(start));
  SINTER_CHECK(planned, loc, "plan_step: the step cannot be compiled: " + why);
  return memory;
}

void Session::mark_step(Loc loc) const {
  detail::GraphStep hold;
  std::vector<std::shared_ptr<TensorImpl>> pending = detail::pendingTensors();
  if (pending.empty())
    return;
  std::vector<lazy::NodePtr> outputs;
  for (const std::shared_ptr<TensorImpl> &impl : pending)
    outputs.push_back(impl->node);
  const CompilerConfig &config = compiler();
  uint64_t structure = detail::recordStep(outputs, config.debug, loc);
  if (config.debug >= 1)
    detail::printMetricsAtExit();
  detail::checkSameStepOnEveryRank(outputs, structure, "mark_step", loc);

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
      detail::recordDonation(structure, inputs, std::move(given), config.debug, loc);
    }
    compiled = runWithCompiler(outputs, structure, config, donatable, values, step, why);
    if (step.out_of_memory) // nothing ran: the tensors are still pending
      throwError("mark_step: " + why, loc);
    if (step.non_finite) // stopped at the kernel; the tensors are still pending
      throwError(cat("mark_step: step ", metrics().steps, ": ", why), loc);
    if (step.inputs_overwritten)
      throwError(cat("mark_step: step ", metrics().steps, ": ", why,
                     "; the step may have written updates over its parameters' or optimizer "
                     "state's memory (Note [Donation]), so it cannot be run another way: "
                     "reload them from a checkpoint"),
                 loc);
    if (compiled)
      for (size_t i = 0; i < pending.size(); ++i)
        pending[i]->node->value = values[i];
    else
      detail::noteFallback(why, config, "the step", loc);
  }
  // Compute everything first (shared subgraphs once), then cut the graph:
  // each live tensor becomes data, and the recorded history is freed.
  if (!compiled)
    detail::evaluateStep(outputs);
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
  detail::addRun(step, secondsSince(start));
  detail::recordStepEnd(compiled, config.enabled, step.memory);
}

namespace {
/// `read()` of a value's host form; a failed copy from a CUDA device (a
/// std::runtime_error from lazy::Value) as sinter::Error at `loc`.
template <typename Read> decltype(auto) readOnHost(Read read, Loc loc) {
  try {
    return read();
  } catch (const Error &) {
    throw;
  } catch (const std::runtime_error &error) {
    throwError(cat("reading a tensor: ", error.what()), loc);
  }
}
} // namespace

const std::vector<double> &detail::hostElements(const lazy::Value &value, Loc loc) {
  return readOnHost([&]() -> const std::vector<double> & { return value.elements(); }, loc);
}

const uint8_t *detail::hostBytes(const lazy::Value &value, Loc loc) {
  return readOnHost([&] { return value.bytes(); }, loc);
}

/// The value of a tensor that is read (to_vector, item, printing), at the
/// user's `loc`: computed the way mark_step() would compute it (compiled or
/// eager, as the current session says; the graph of this tensor alone,
/// cached by its structure like a step), or on the reference executor when
/// so configured or when the compiler cannot: a fallback like a step's,
/// counted, said, and refused without allow_fallback (also when no step
/// compiler is installed).
/// The graph is not cut: the next mark_step() computes the step as a whole.
std::shared_ptr<const lazy::Value> detail::valueOf(const Tensor &tensor, Loc loc) {
  if (std::shared_ptr<const lazy::Value> known = knownValue(*tensor.impl()))
    return known;
  GraphStep hold; // computing writes values into the graph
  const lazy::NodePtr &node = tensor.impl()->node;
  if (node->value) // computed by another thread's step meanwhile
    return node->value;
  const CompilerConfig &config = Session::current(loc).compiler();
  std::vector<lazy::NodePtr> outputs = {node};
  uint64_t structure = lazy::structural_hash(outputs);
  detail::checkSameStepOnEveryRank(outputs, structure, "reading a tensor", loc);
  if (forceReference || config.use_reference)
    return detail::evaluate(tensor);
  std::vector<std::shared_ptr<const lazy::Value>> values;
  StepMetrics step;
  std::string why;
  auto start = std::chrono::steady_clock::now();
  // The graph stays (only mark_step cuts it): nothing is given away.
  bool ran = runWithCompiler(outputs, structure, config, {}, values, step, why);
  detail::addRun(step, secondsSince(start));
  if (step.out_of_memory)
    throwError("reading a tensor: " + why, loc);
  if (step.non_finite)
    throwError("reading a tensor: " + why, loc);
  if (!ran) {
    detail::noteFallback(why, config, "reading a tensor", loc);
    return detail::evaluate(tensor);
  }
  node->value = values.front();
  return node->value;
}

} // namespace sinter
