//===- Aot.cpp - a recorded step, compiled and named for the runtime ------===//
#include "sinter/Aot.h"
#include "TensorImpl.h"

#include "Format.h"
#include "sinter/Compiler.h"
#include "sinter/Error.h"
#include "sinter/Session.h"
#include "sinter/Version.h"
#include "sinter/io/Safetensors.h"
#include "sinter/lazy/Graph.h"
#include "sinter/nn/Module.h"
#include "sinter/optim/Optimizer.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Files.h"
#include "sinter/runtime/ProgramFile.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>

#include <unistd.h>

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
      SINTER_CHECK(!name.empty(), loc,
                   cat("aot::StepExport: a tensor of the ", what, " has no name"));
      SINTER_CHECK(names.insert(name).second, loc,
                   cat("aot::StepExport: two tensors are named '", name, "'"));
      SINTER_CHECK(tensor.defined(), loc,
                   cat("aot::StepExport: ", what, " tensor '", name, "' is undefined"));
      lazy::NodePtr node = lazy::node_of(tensor);
      SINTER_CHECK(node->op == lazy::Op::Data, loc,
                   cat("aot::StepExport: ", what, " tensor '", name, "' is pending (recorded at ",
                       lineOf(node->loc), "); call mark_step() before the step to export"));
      into.emplace(node.get(), name);
      held_.push_back(std::move(node));
    }
  };
  take(state_(), "state", stateNames_);
  take(inputs_, "input", inputNames_);
}

runtime::Program StepExport::finish(const NamedTensors &outputs, Loc loc) {
  sinter::detail::GraphStep hold; // compiles the graph, as a step does
  using Role = runtime::Program::Role;
  std::vector<lazy::NodePtr> nodes;
  std::vector<std::string> resultNames;
  for (const auto &[name, tensor] : outputs) {
    SINTER_CHECK(tensor.defined(), loc, cat("aot::finish: output '", name, "' is undefined"));
    nodes.push_back(lazy::node_of(tensor));
    resultNames.push_back(name);
  }
  // The state's new values are results; a state tensor the step leaves as
  // it was is not (the session keeps it), nor is it donated.
  NamedTensors state = state_();
  SINTER_CHECK(state.size() == stateNames_.size(), loc,
               cat("aot::finish: the state holds ", state.size(), " tensors, at the start ",
                   stateNames_.size()));
  std::set<const lazy::Node *> kept;
  for (const auto &[name, tensor] : state) {
    SINTER_CHECK(tensor.defined(), loc, cat("aot::finish: state tensor '", name, "' is undefined"));
    lazy::NodePtr node = lazy::node_of(tensor);
    if (stateNames_.count(node.get())) {
      kept.insert(node.get());
      continue;
    }
    nodes.push_back(std::move(node));
    resultNames.push_back(name);
  }
  std::vector<const lazy::Node *> donatable;
  for (const auto &[node, name] : stateNames_)
    if (!kept.count(node))
      donatable.push_back(node);
  std::shared_ptr<detail::StepCompiler> compiler = detail::step_compiler();
  SINTER_CHECK(compiler != nullptr, loc,
               "aot::finish: no compiler is installed (call sinter::compiler::install())");
  runtime::Program program;
  std::string why;
  SINTER_CHECK(compiler->export_step(nodes, Session::current(loc).compiler(), donatable, program,
                                     source_, why),
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

namespace {

using Json = nlohmann::json;

Json valuesOf(const std::vector<runtime::Program::Value> &values, bool inputs) {
  Json list = Json::array();
  for (const runtime::Program::Value &value : values) {
    if (inputs && value.role != runtime::Program::Role::BatchInput)
      continue;
    list.push_back({{"name", value.name}, {"dtype", value.dtype}, {"shape", value.shape}});
  }
  return list;
}

Json stateOf(const std::vector<runtime::Program::Value> &values) {
  Json list = Json::array();
  for (const runtime::Program::Value &value : values)
    if (value.role == runtime::Program::Role::Parameter ||
        value.role == runtime::Program::Role::OptimizerState)
      list.push_back({{"name", value.name},
                      {"role", runtime::nameOf(value.role)},
                      {"dtype", value.dtype},
                      {"shape", value.shape}});
  return list;
}

Json memoryOf(const runtime::Program &program) {
  runtime::Allocation allocation = runtime::allocationOf(program);
  Json categories = Json::object();
  for (const auto &category : program.report.peakCategories)
    categories[category.name] = category.bytes;
  return {{"arena_bytes", program.arenaBytes},
          {"step_bytes", allocation.arena + allocation.results},
          {"peak_by_category", categories}};
}

const char *scheduleKind(runtime::Schedule::Kind kind) {
  switch (kind) {
  case runtime::Schedule::Kind::LinearWarmup:
    return "linear_warmup";
  case runtime::Schedule::Kind::WarmupCosine:
    return "warmup_cosine";
  case runtime::Schedule::Kind::Constant:
    break;
  }
  return "constant";
}

void writeFile(const std::string &path, std::string_view bytes, Loc loc) {
  Status written = runtime::writeFileAtomically(path, {bytes}, "write_artifact");
  SINTER_CHECK(written.ok(), loc, std::string(written.message()));
}

} // namespace

void write_artifact(const std::string &dir, const ArtifactContents &contents, Loc loc) {
  namespace fs = std::filesystem;
  SINTER_CHECK(contents.step >= 0, loc,
               cat("write_artifact: the step count must be >= 0, got ", contents.step));
  std::error_code error;
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty())
    target = target.parent_path();
  SINTER_CHECK(!fs::exists(target, error) ||
                   (fs::is_directory(target, error) &&
                    (fs::is_empty(target, error) || fs::exists(target / "manifest.json"))),
               loc,
               cat("write_artifact: ", target.string(),
                   " exists and is not an artifact; give another folder (its files are left as "
                   "they are)"));
  SINTER_CHECK(!contents.functions.empty(), loc, "write_artifact: no functions to write");
  fs::path temporary = target;
  temporary += cat(".tmp.", getpid());
  fs::remove_all(temporary, error);
  fs::create_directories(temporary / "kernels", error);
  SINTER_CHECK(!error, loc,
               cat("write_artifact: cannot create ", temporary.string(), ": ", error.message()));
  std::map<std::string, std::string> files; // name -> bytes' SHA-256
  auto add = [&](const std::string &name, std::string_view bytes) {
    writeFile((temporary / name).string(), bytes, loc);
    files[name] = runtime::sha256Hex(bytes);
  };
  Json functions = Json::object(), cubins = Json::object();
  try {
    for (const ArtifactFunction &function : contents.functions) {
      runtime::Program program = function.program;
      StatusOr<std::string> library = runtime::readWholeFile(program.library, "write_artifact");
      SINTER_CHECK(library.ok(), loc, std::string(library.status().message()));
      std::string kernels = cat("kernels/", function.name, ".so");
      add(kernels, *library);
      program.library = kernels;
      std::string programFile = function.name + ".program.json";
      add(programFile, runtime::writeProgram(program));
      bool cuda = contents.target.kind == "cuda";
      if (contents.keep_sources) {
        fs::create_directories(temporary / "sources", error);
        add(cat("sources/", function.name, cuda ? ".cu" : ".cpp"), function.source);
      }
      SINTER_CHECK(cuda || function.cubins.empty(), loc,
                   cat("write_artifact: function ", function.name, " has cubins but the target is ",
                       contents.target.kind));
      Json images = Json::object();
      for (const std::string &arch : contents.target.cudaArchitectures) {
        auto cubin = function.cubins.find(arch);
        SINTER_CHECK(cubin != function.cubins.end(), loc,
                     cat("write_artifact: function ", function.name, " has no cubin for ", arch));
        StatusOr<std::string> image = runtime::readWholeFile(cubin->second, "write_artifact");
        SINTER_CHECK(image.ok(), loc, std::string(image.status().message()));
        std::string file = cat("kernels/", function.name, ".", arch,
                               arch.starts_with("compute_") ? ".ptx" : ".cubin");
        add(file, *image);
        images[arch] = file;
      }
      if (cuda)
        cubins[function.name] = images;
      Json donations = Json::object();
      for (size_t r = 0; r < program.results.size(); ++r)
        if (program.donors[r] >= 0)
          donations[program.signature.results[r].name] =
              program.signature.arguments[program.donors[r]].name;
      functions[function.name] = {{"program", programFile},
                                  {"inputs", valuesOf(program.signature.arguments, true)},
                                  {"outputs", valuesOf(program.signature.results, false)},
                                  {"state", stateOf(program.signature.arguments)},
                                  {"donations", donations},
                                  {"memory", memoryOf(program)}};
    }
    io::save_safetensors((temporary / "weights.safetensors").string(), contents.weights, {}, loc);
    io::save_safetensors((temporary / "optimizer.safetensors").string(), contents.optimizer_state,
                         {{"step", std::to_string(contents.step)}}, loc);
    for (const char *state : {"weights.safetensors", "optimizer.safetensors"}) {
      StatusOr<std::string> bytes =
          runtime::readWholeFile((temporary / state).string(), "write_artifact");
      SINTER_CHECK(bytes.ok(), loc, std::string(bytes.status().message()));
      files[state] = runtime::sha256Hex(*bytes);
    }
    const runtime::ArtifactTarget &t = contents.target;
    Json libraries = Json::array();
    for (const runtime::SharedLibrary &library : contents.shared_libraries)
      libraries.push_back({{"soname", library.soname}, {"package", library.package}});
    const runtime::Schedule &schedule = contents.optimizer.schedule;
    Json manifest = {
        {"format", runtime::kArtifactFormat},
        {"version", runtime::kArtifactFormatVersion},
        {"sinter_version", kVersion},
        {"target",
         {{"kind", t.kind}, {"triple", t.triple}, {"cpu", t.cpu}, {"features", t.features}}},
        {"cuda", {{"architectures", t.cudaArchitectures}, {"cubins", cubins}}},
        {"shared_libraries", libraries},
        {"functions", functions},
        {"optimizer",
         {{"kind", contents.optimizer.kind},
          {"hyperparameters", contents.optimizer.hyperparameters},
          {"schedule",
           {{"kind", scheduleKind(schedule.kind)},
            {"base_lr", schedule.baseLr},
            {"warmup_steps", schedule.warmupSteps},
            {"total_steps", schedule.totalSteps},
            {"min_lr", schedule.minLr}}}}},
        {"seed", contents.seed},
        {"model", contents.model},
        {"files", files}};
    writeFile((temporary / "manifest.json").string(), manifest.dump(1) + "\n", loc);
  } catch (...) {
    fs::remove_all(temporary, error);
    throw;
  }
  // The old artifact goes aside, the new one into place, the old one away.
  fs::path old = target;
  old += cat(".old.", getpid());
  bool had = fs::exists(target, error);
  if (had)
    fs::rename(target, old, error);
  if (!error)
    fs::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    if (had && !fs::exists(target, ignored))
      fs::rename(old, target, ignored);
    fs::remove_all(temporary, ignored);
  }
  SINTER_CHECK(!error, loc,
               cat("write_artifact: cannot put ", target.string(), " in place: ", error.message()));
  fs::remove_all(old, error);
}

std::optional<ArtifactRequest> requested_artifact(Loc loc) {
  const char *dir = std::getenv("SINTER_AOT_OUTPUT");
  if (dir == nullptr || *dir == '\0')
    return std::nullopt;
  ArtifactRequest request;
  request.dir = dir;
  if (const char *cpu = std::getenv("SINTER_AOT_CPU"); cpu != nullptr && *cpu != '\0')
    request.cpu = cpu;
  SINTER_CHECK(request.cpu == "native" || request.cpu == "x86-64-v2" ||
                   request.cpu == "x86-64-v3" || request.cpu == "x86-64-v4",
               loc,
               cat("SINTER_AOT_CPU is '", request.cpu,
                   "'; expected x86-64-v2, x86-64-v3, x86-64-v4 or native"));
  const char *keep = std::getenv("SINTER_AOT_KEEP_SOURCES");
  request.keep_sources = keep != nullptr && std::string(keep) == "1";
  if (const char *archs = std::getenv("SINTER_AOT_CUDA_ARCHS"); archs != nullptr && *archs) {
    StatusOr<std::vector<std::string>> list = runtime::cudaArchitectureList(archs);
    SINTER_CHECK(list.ok(), loc, cat("SINTER_AOT_CUDA_ARCHS: ", list.status().message()));
    request.cuda_architectures = std::move(*list);
  }
  return request;
}

ArtifactContents training_artifact(const TrainingExport &what, const ArtifactRequest &request,
                                   Loc loc) {
  SINTER_CHECK(what.model != nullptr && what.optimizer != nullptr && what.loss, loc,
               "training_artifact: give the model, the optimizer and the loss");
  SINTER_CHECK(!what.batch.empty(), loc, "training_artifact: the train step takes no batch");
  SINTER_CHECK(what.predict_inputs.empty() == !what.predict, loc,
               "training_artifact: give predict's inputs and what it computes, or neither");
  nn::Module &model = *what.model;
  optim::Optimizer &optimizer = *what.optimizer;
  const std::string kind = optimizer.kind();
  SINTER_CHECK(kind == "adam" || kind == "adamw", loc,
               cat("training_artifact: the optimizer is ",
                   kind.empty() ? std::string("not one of Sinter's") : kind,
                   "; an artifact trains with Adam or AdamW (their state is named and their step "
                   "scalars are formulas of the step count)"));
  Settings settings = Session::current(loc).settings();
  settings.compiler.enabled = true;
  settings.compiler.use_reference = false;
  settings.compiler.allow_fallback = false;
  settings.compiler.cpu = request.cpu;
  Session::Use use(settings);

  // The step count the artifact starts at: a fresh optimizer's 0, with zero
  // moments as data (m * beta + g * (1 - beta) is g * (1 - beta) exactly
  // at m = 0: the first step's value), or the steps it has taken.
  optim::Optimizer::State state = optimizer.state_dict();
  // The optimizer's parameters (its state is indexed by them): all of the
  // model's, or some (a frozen backbone), which the export leaves as they are.
  const std::vector<Tensor> &parameters = optimizer.params();
  int64_t step = 0;
  if (state.empty()) {
    for (size_t i = 0; i < parameters.size(); ++i) {
      state.emplace_back(cat(i, ".step"), from_vector<int64_t>({1}, {}));
      state.emplace_back(cat(i, ".exp_avg"), zeros(parameters[i].shape(), parameters[i].dtype()));
      state.emplace_back(cat(i, ".exp_avg_sq"),
                         zeros(parameters[i].shape(), parameters[i].dtype()));
    }
    optimizer.load_state_dict(state, loc);
  } else {
    std::set<int64_t> counts;
    for (const auto &[name, tensor] : state)
      if (name.ends_with(".step"))
        counts.insert(tensor.item<int64_t>());
    SINTER_CHECK(counts.size() == 1 && state.size() == 3 * parameters.size(), loc,
                 "training_artifact: the optimizer's parameters have taken different numbers of "
                 "steps (or some none); export from a fresh optimizer or after whole steps");
    step = *counts.begin();
  }
  mark_step();
  auto weights = [&] {
    NamedTensors tensors;
    for (const auto &[name, p] : model.named_parameters())
      tensors.emplace_back("model." + name, p);
    for (const auto &[name, b] : model.named_buffers())
      tensors.emplace_back("model." + name, b);
    return tensors;
  };
  auto moments = [&] {
    NamedTensors tensors;
    for (const auto &[name, t] : optimizer.state_dict())
      if (!name.ends_with(".step")) // the step count is the session's
        tensors.emplace_back("optimizer." + name, t);
    return tensors;
  };

  ArtifactContents contents;
  contents.weights = weights();
  contents.optimizer_state = moments();
  // Their values now, before the steps below are recorded.
  for (auto *list : {&contents.weights, &contents.optimizer_state})
    for (auto &[name, tensor] : *list)
      tensor = tensor.detach();
  if (what.predict) {
    // Evaluation mode for predict, the model's own mode back after it (also
    // when predict throws).
    struct Mode {
      nn::Module &model;
      bool training;
      ~Mode() { model.train(training); }
    } mode{model, model.is_training()};
    model.eval();
    NoGradGuard noGrad;
    StepExport predict(weights, what.predict_inputs, step, loc);
    Tensor logits = what.predict();
    contents.functions.push_back(
        {"predict", predict.finish({{"logits", logits}}, loc), predict.source()});
  }
  {
    StepExport train(
        [&] {
          NamedTensors tensors = weights();
          for (auto &entry : moments())
            tensors.push_back(std::move(entry));
          return tensors;
        },
        what.batch, step, loc);
    optimizer.zero_grad();
    Tensor loss = what.loss();
    loss.backward(Tensor(), loc);
    if (what.after_backward)
      what.after_backward();
    optimizer.step(loc);
    contents.functions.push_back(
        {"train_step", train.finish({{"loss", loss}}, loc), train.source()});
  }

  contents.target.kind = "cpu";
  contents.target.triple = "x86_64-linux-gnu";
  contents.target.cpu = request.cpu;
  std::shared_ptr<detail::StepCompiler> compiler = detail::step_compiler();
  if (!parameters.empty() && parameters.front().device().isCuda()) {
    // Note [CUDA artifacts] in sinter/runtime/Artifact.h: the steps were
    // compiled for the CUDA target (its simulator's build, for this
    // machine's CPU); the same kernels as cubins for each architecture.
    SINTER_CHECK(!request.cuda_architectures.empty(), loc,
                 "training_artifact: the step is on a CUDA device but the request names no GPU "
                 "architecture (ArtifactRequest::cuda_architectures, sinter-compile --arch)");
    contents.target.kind = "cuda";
    contents.target.cpu = "native";
    contents.target.cudaArchitectures = request.cuda_architectures;
    for (ArtifactFunction &function : contents.functions)
      for (const std::string &arch : request.cuda_architectures) {
        std::string path, why;
        SINTER_CHECK(compiler->build_cuda_module(function.source, arch, path, why), loc,
                     cat("training_artifact: ", function.name, "'s kernels for ", arch, ": ", why));
        function.cubins[arch] = path;
      }
  }
  contents.target.features = runtime::cpuTargetFeatures(contents.target.cpu);
  if (compiler)
    for (const auto &[soname, package] : compiler->kernel_library_dependencies())
      contents.shared_libraries.push_back({soname, package});
  contents.optimizer.kind = kind;
  contents.optimizer.hyperparameters = optimizer.hyperparameters();
  contents.optimizer.schedule = what.schedule.value_or(runtime::Schedule{});
  if (!what.schedule)
    contents.optimizer.schedule.baseLr = optimizer.lr();
  contents.seed = what.seed;
  contents.step = step;
  contents.model = what.model_name;
  contents.keep_sources = request.keep_sources;
  return contents;
}

} // namespace sinter::aot
