//===- Aot.cpp - a recorded step, compiled and named for the runtime ------===//
#include "sinter/Aot.h"

#include "Format.h"
#include "sinter/Compiler.h"
#include "sinter/Error.h"
#include "sinter/Session.h"
#include "sinter/lazy/Graph.h"

#include <map>
#include <set>

namespace sinter::aot {
namespace {

std::string lineOf(const std::source_location &loc) {
  std::string file = loc.file_name();
  size_t slash = file.rfind('/');
  return cat(slash == std::string::npos ? file : file.substr(slash + 1), ":", loc.line());
}

} // namespace

StepExport::StepExport(std::function<NamedTensors()> state, NamedTensors inputs, int64_t step,
                       Loc loc)
    : state_(std::move(state)), inputs_(std::move(inputs)), step_(step),
      streamBefore_(get_rng_state().stream) {
  SINTER_CHECK(step >= 0, loc, cat("aot::StepExport: step must be >= 0, got ", step));
  std::set<std::string> names;
  auto take = [&](const NamedTensors &tensors, const char *what,
                  std::unordered_map<const lazy::Node *, std::string> &into) {
    for (const auto &[name, tensor] : tensors) {
      SINTER_CHECK(!name.empty(), loc, cat("aot::StepExport: a tensor of the ", what, " has no name"));
      SINTER_CHECK(names.insert(name).second, loc,
                   cat("aot::StepExport: two tensors are named '", name, "'"));
      SINTER_CHECK(tensor.defined(), loc,
                   cat("aot::StepExport: ", what, " tensor '", name, "' is undefined"));
      lazy::NodePtr node = lazy::node_of(tensor);
      SINTER_CHECK(node->op == lazy::Op::Data, loc,
                   cat("aot::StepExport: ", what, " tensor '", name,
                       "' is pending (recorded at ", lineOf(node->loc),
                       "); call mark_step() before the step to export"));
      into.emplace(node.get(), name);
      held_.push_back(std::move(node));
    }
  };
  take(state_(), "state", stateNames_);
  take(inputs_, "input", inputNames_);
}

runtime::Program StepExport::finish(const NamedTensors &outputs, Loc loc) {
  using Role = runtime::Program::Role;
  std::vector<lazy::NodePtr> nodes;
  std::vector<std::string> resultNames;
  for (const auto &[name, tensor] : outputs) {
    SINTER_CHECK(tensor.defined(), loc, cat("aot::finish: output '", name, "' is undefined"));
    nodes.push_back(lazy::node_of(tensor));
    resultNames.push_back(name);
  }
  NamedTensors state = state_();
  SINTER_CHECK(state.size() == stateNames_.size(), loc,
               cat("aot::finish: the state holds ", state.size(), " tensors, at the start ",
                   stateNames_.size()));
  for (const auto &[name, tensor] : state) {
    SINTER_CHECK(tensor.defined(), loc, cat("aot::finish: state tensor '", name, "' is undefined"));
    nodes.push_back(lazy::node_of(tensor));
    resultNames.push_back(name);
  }
  // The old state dies with the step, unless the step returns it as it is
  // (a state tensor no update changes).
  std::set<const lazy::Node *> results;
  for (const lazy::NodePtr &node : nodes)
    results.insert(node.get());
  std::vector<const lazy::Node *> donatable;
  for (const auto &[node, name] : stateNames_)
    if (!results.count(node))
      donatable.push_back(node);
  std::shared_ptr<detail::StepCompiler> compiler = detail::step_compiler();
  SINTER_CHECK(compiler != nullptr, loc,
               "aot::finish: no compiler is installed (call sinter::compiler::install())");
  runtime::Program program;
  std::string why;
  SINTER_CHECK(compiler->export_step(nodes, Session::current(loc).compiler(), donatable, program,
                                     why),
               loc, cat("aot::finish: the step cannot be compiled: ", why));
  uint64_t streams = get_rng_state().stream - streamBefore_;

  // Name every argument (the graph's data nodes in order) and result.
  std::vector<runtime::Program::Value> &arguments = program.signature.arguments;
  std::map<std::string, int> scalars;
  int keys = 0;
  size_t a = 0;
  for (const lazy::Node *node : lazy::topological_order(nodes)) {
    if (node->op != lazy::Op::Data)
      continue;
    SINTER_CHECK(a < arguments.size(), loc,
                 "aot::finish: the compiled step has fewer arguments than data (a Sinter bug)");
    runtime::Program::Value &value = arguments[a++];
    if (auto it = stateNames_.find(node); it != stateNames_.end()) {
      value.name = it->second;
      if (value.role != Role::Parameter && value.role != Role::OptimizerState)
        value.role = Role::Parameter; // state no update reads (a frozen weight) is kept as is
    } else if (auto in = inputNames_.find(node); in != inputNames_.end()) {
      value.name = in->second;
      value.role = Role::BatchInput;
    } else if (node->formula) {
      std::string name = runtime::nameOf(node->formula->kind);
      int seen = scalars[name]++;
      value.name = seen == 0 ? name : cat(name, ".", seen);
    } else if (node->randomStream && value.role == Role::RandomKey) {
      value.name = cat("random_key.", keys++);
      value.random = *node->randomStream;
      value.random->streamsPerStep = streams;
      value.random->atStep = step_;
    } else {
      throwError(cat("aot::finish: the step reads a tensor (", name(node->dtype),
                     toString(node->shape), ", made at ", lineOf(node->loc),
                     ") that is neither state nor an input; pass it in the state or the inputs"),
                 loc);
    }
  }
  for (size_t r = 0; r < resultNames.size(); ++r)
    program.signature.results[r].name = resultNames[r];
  Status valid = runtime::validateProgram(program);
  SINTER_CHECK(valid.ok(), loc, cat("aot::finish: ", std::string(valid.message())));
  return program;
}

} // namespace sinter::aot
