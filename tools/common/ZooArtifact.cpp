//===- ZooArtifact.cpp - a zoo model's training step as an artifact -------===//
#include "ZooArtifact.h"

#include "ZooTask.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Compiler/StepCompiler.h"

namespace sinter::tools {
namespace {

aot::NamedTensors optimizerState(const optim::Optimizer &optimizer) {
  aot::NamedTensors state;
  for (const auto &[name, t] : optimizer.state_dict())
    if (!name.ends_with(".step")) // the step count is the session's
      state.emplace_back("optimizer." + name, t);
  return state;
}

} // namespace

aot::ArtifactContents zooArtifact(const ZooArtifactOptions &options) {
  compiler::install();
  Settings settings = Session::current().settings();
  settings.compiler.enabled = true;
  settings.compiler.use_reference = false;
  settings.compiler.allow_fallback = false;
  settings.compiler.cpu = options.cpu;
  settings.compiler.memory_budget = options.memory_budget;
  Session::Use use(settings);

  ZooTask task = makeZooTask(options.model, options.batch, options.length, options.seed,
                             /*imageSize=*/32, options.dropout);
  nn::Module &model = *task.model;
  optim::AdamW adamw(model.parameters(),
                     {.lr = options.learning_rate, .weight_decay = options.weight_decay});
  // Zero moments as data: the steady step from the first step on. With
  // m = v = 0 at step 1, m * beta + g * (1 - beta) is g * (1 - beta)
  // exactly, the first step's value.
  optim::Optimizer::State zero;
  std::vector<Tensor> parameters = model.parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    zero.emplace_back(std::to_string(i) + ".step", from_vector<int64_t>({1}, {}));
    zero.emplace_back(std::to_string(i) + ".exp_avg", zeros(parameters[i].shape(), parameters[i].dtype()));
    zero.emplace_back(std::to_string(i) + ".exp_avg_sq", zeros(parameters[i].shape(), parameters[i].dtype()));
  }
  adamw.load_state_dict(zero);
  mark_step();

  aot::ArtifactContents contents;
  contents.weights = modelTensors(model);
  contents.optimizer_state = optimizerState(adamw);
  // Their values now, before the steps below are recorded.
  for (auto *list : {&contents.weights, &contents.optimizer_state})
    for (auto &[name, tensor] : *list)
      tensor = tensor.detach();

  {
    model.eval();
    NoGradGuard noGrad;
    aot::StepExport predict([&] { return modelTensors(model); }, {{"input", task.inputs}}, 0);
    Tensor logits = model(task.inputs);
    contents.functions.push_back({"predict", predict.finish({{"logits", logits}}), predict.source()});
    model.train();
  }
  {
    aot::StepExport train(
        [&] {
          aot::NamedTensors state = modelTensors(model);
          for (auto &entry : optimizerState(adamw))
            state.push_back(std::move(entry));
          return state;
        },
        {{"input", task.inputs}, {"target", task.targets}}, 0);
    Tensor loss = task.loss();
    loss.backward();
    adamw.step();
    contents.functions.push_back({"train_step", train.finish({{"loss", loss}}), train.source()});
  }

  contents.target.kind = "cpu";
  contents.target.triple = "x86_64-linux-gnu";
  contents.target.cpu = options.cpu;
  contents.target.features = runtime::cpuTargetFeatures(options.cpu);
  for (const auto &[soname, package] : codegen::kernelLibraryDependencies())
    contents.shared_libraries.push_back({soname, package});
  contents.optimizer.kind = "adamw";
  contents.optimizer.hyperparameters = {{"lr", options.learning_rate},
                                        {"beta1", 0.9},
                                        {"beta2", 0.999},
                                        {"eps", 1e-8},
                                        {"weight_decay", options.weight_decay}};
  contents.optimizer.schedule = options.schedule;
  contents.optimizer.schedule.baseLr = options.learning_rate;
  contents.seed = options.seed;
  contents.model = options.model;
  contents.keep_sources = options.keep_sources;
  return contents;
}

} // namespace sinter::tools
