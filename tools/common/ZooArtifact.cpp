//===- ZooArtifact.cpp - a zoo model's training step as an artifact -------===//
#include "ZooArtifact.h"

#include "ZooTask.h"
#include "sinter/Compiler/StepCompiler.h"

namespace sinter::tools {

aot::ArtifactContents zooArtifact(const ZooArtifactOptions &options) {
  compiler::install();
  Settings settings = Session::current().settings();
  settings.compiler.memory_budget = options.memory_budget;
  if (!options.cuda_architectures.empty())
    settings.device = Device::cuda(0);
  Session::Use use(settings);
  ZooTask task = makeZooTask(options.model, options.batch, options.length, options.seed,
                             /*imageSize=*/32, options.dropout);
  optim::AdamW adamw(task.model->parameters(),
                     {.lr = options.learning_rate, .weight_decay = options.weight_decay});
  runtime::Schedule schedule = options.schedule;
  schedule.baseLr = options.learning_rate;
  return aot::training_artifact({.model = task.model.get(),
                                 .optimizer = &adamw,
                                 .schedule = schedule,
                                 .batch = {{"input", task.inputs}, {"target", task.targets}},
                                 .loss = [&] { return task.loss(); },
                                 .predict_inputs = {{"input", task.inputs}},
                                 .predict = [&] { return (*task.model)(task.inputs); },
                                 .seed = options.seed,
                                 .model_name = options.model},
                                {.dir = "",
                                 .cpu = options.cpu,
                                 .keep_sources = options.keep_sources,
                                 .cuda_architectures = options.cuda_architectures});
}

} // namespace sinter::tools
