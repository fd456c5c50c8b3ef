//===- sinter-train.cpp - run a training job ------------------------------===//
//
// sinter-train --config job.json [flags]: the job model of managed training
// compilers (an entry point, hyperparameters, a compiler config, ...) on
// this machine. Flags set the same fields as the job file and win over it.
// A job that cannot run (unknown key, wrong type, impossible value, missing
// data, bad flag) is refused before anything starts, with exit status 2.
//
//===----------------------------------------------------------------------===//
#include "Job.h"
#include "ToolMain.h"
#include "Train.h"

#include <cstdio>
#include <optional>

namespace {

using json = nlohmann::json;
using sinter::tools::JobError;

/// A flag's value as JSON: a number, true/false or null when it reads as
/// one, otherwise a string.
json flagValue(const std::string &text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() || value.is_object() || value.is_array() ? json(text) : value;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Runs a training job: a zoo model (or your own program) with the job file's "
               "hyperparameters, compiler config and data.",
               "sinter-train"};
  std::string configPath, entry, batch, dataset, outputDir, compiler, resumeFrom, device;
  std::optional<double> lr;
  std::optional<int64_t> epochs, steps, seed;
  std::vector<std::string> settings;
  bool debug = false;
  int64_t stopAt = 0;
  app.add_option("--config", configPath, "the job file (JSON)")->check(CLI::ExistingFile);
  app.add_option("--entry-point,--model", entry,
                 "a model (" + sinter::tools::jobModels() +
                     ") or the path of your training program");
  app.add_option("--batch-size", batch, "hyperparameters.batch_size: a number or auto");
  app.add_option("--learning-rate,--lr", lr, "hyperparameters.learning_rate");
  app.add_option("--epochs", epochs, "hyperparameters.epochs");
  app.add_option("--steps", steps, "hyperparameters.steps");
  app.add_option("--seed", seed, "hyperparameters.seed");
  app.add_option("--set", settings, "KEY=VALUE: any hyperparameter (repeatable)");
  app.add_option("--dataset", dataset, "fashion-mnist, or a path");
  app.add_option("--output-dir", outputDir, "where metrics, checkpoints and plots go");
  app.add_option("--compiler", compiler, "compiler_config.enabled")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_flag("--debug", debug, "compiler_config.debug: dumps and metrics in output_dir/debug");
  auto *resumeOption =
      app.add_option("--resume", resumeFrom,
                     "continue from output_dir/checkpoint.safetensors, or the checkpoint given")
          ->expected(0, 1);
  app.add_option("--device", device,
                 "where the steps run: cpu, cuda or cuda:N (default: cuda:0 for n_gpus 1, else "
                 "SINTER_DEVICE, else cpu)");
  app.add_option("--stop-at", stopAt,
                 "stop after this step with a checkpoint, as an "
                 "interrupted job would (then --resume)")
      ->check(CLI::PositiveNumber);
  return sinter::tools::toolMain(app, argc, argv, [&] {
    const bool resume = resumeOption->count() > 0;
    try {
      json document = configPath.empty() ? json::object() : sinter::tools::readJobFile(configPath);
      if (!document.is_object())
        throw JobError(configPath, "must hold a JSON object");
      json &hp = document["hyperparameters"];
      if (hp.is_null())
        hp = json::object();
      if (!hp.is_object())
        throw JobError("hyperparameters", "must be a JSON object");
      if (!entry.empty())
        document["entry_point"] = entry;
      if (!dataset.empty())
        document["dataset"] = dataset;
      if (!outputDir.empty())
        document["output_dir"] = outputDir;
      if ((!compiler.empty() || debug) && document.contains("compiler_config") &&
          !document["compiler_config"].is_object())
        throw JobError("compiler_config",
                       "must be a JSON object, got " + document["compiler_config"].dump());
      if (!compiler.empty())
        document["compiler_config"]["enabled"] = compiler == "on";
      if (debug)
        document["compiler_config"]["debug"] = true;
      if (!batch.empty())
        hp["batch_size"] = flagValue(batch);
      if (lr)
        hp["learning_rate"] = *lr;
      if (epochs)
        hp["epochs"] = *epochs;
      if (steps)
        hp["steps"] = *steps;
      if (seed)
        hp["seed"] = *seed;
      for (const std::string &setting : settings) {
        size_t equals = setting.find('=');
        if (equals == std::string::npos || equals == 0)
          throw JobError("--set", "\"" + setting + "\" is not KEY=VALUE");
        hp[setting.substr(0, equals)] = flagValue(setting.substr(equals + 1));
      }
      if (hp.empty())
        document.erase("hyperparameters");
      sinter::tools::Job job = sinter::tools::parseJob(document);
      return sinter::tools::runJob(job, {.resume = resume,
                                         .checkpoint = resumeFrom,
                                         .stop_at = stopAt,
                                         .device = device,
                                         .command = std::vector<std::string>(argv, argv + argc)});
    } catch (const JobError &error) {
      std::fprintf(stderr, "sinter-train: %s\n", error.what());
      return 2;
    }
  });
}
