//===- sinter-compile.cpp - a zoo model's training step, ahead of time ----===//
//
// Writes an artifact (Note [Artifacts] in sinter/runtime/Artifact.h): the
// model's steady training step (AdamW) and its prediction function compiled
// for a CPU level, with its initial weights and optimizer state, for
// libsinter_runtime to run on another machine with no compiler:
//
//   sinter-compile --model mlp --batch-size 64 -o mlp.sinter
//
// It prints each function's planned memory and what a machine that runs
// the artifact needs installed.
//
//===----------------------------------------------------------------------===//
#include "ZooArtifact.h"
#include "ZooTask.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

namespace {

/// "constant", "linear-warmup:W", "warmup-cosine:W:T[:MIN]" as a Schedule.
sinter::runtime::Schedule parseSchedule(const std::string &text) {
  using Kind = sinter::runtime::Schedule::Kind;
  sinter::runtime::Schedule schedule;
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1)
    parts.push_back(text.substr(start, colon - start));
  parts.push_back(text.substr(start));
  auto number = [&](size_t i) {
    size_t used = 0;
    double value = std::stod(parts.at(i), &used);
    if (used != parts[i].size())
      throw std::invalid_argument(parts[i]);
    return value;
  };
  try {
    if (parts[0] == "constant" && parts.size() == 1)
      return schedule;
    if (parts[0] == "linear-warmup" && parts.size() == 2) {
      schedule.kind = Kind::LinearWarmup;
      schedule.warmupSteps = static_cast<int64_t>(number(1));
      if (schedule.warmupSteps > 0)
        return schedule;
    }
    if (parts[0] == "warmup-cosine" && (parts.size() == 3 || parts.size() == 4)) {
      schedule.kind = Kind::WarmupCosine;
      schedule.warmupSteps = static_cast<int64_t>(number(1));
      schedule.totalSteps = static_cast<int64_t>(number(2));
      schedule.minLr = parts.size() == 4 ? number(3) : 0.0;
      if (schedule.warmupSteps >= 0 && schedule.totalSteps > schedule.warmupSteps &&
          schedule.minLr >= 0)
        return schedule;
    }
  } catch (const std::exception &) {
  }
  throw CLI::ValidationError("--schedule",
                             "'" + text +
                                 "' is not constant, linear-warmup:WARMUP_STEPS or "
                                 "warmup-cosine:WARMUP_STEPS:TOTAL_STEPS[:MIN_LR] (0 <= warmup "
                                 "< total)");
}

std::string mib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Compiles a zoo model's training step and prediction ahead of time into an "
               "artifact that libsinter_runtime runs with no compiler.",
               "sinter-compile"};
  sinter::tools::ZooArtifactOptions options;
  std::string output, target = "cpu", schedule = "constant";
  app.add_option("--model", options.model, sinter::tools::kZooModels)
      ->required()
      ->check(CLI::IsMember({"mlp", "lenet", "resnet18", "gpt-mini", "bert-mini"}));
  app.add_option("--batch-size", options.batch, "samples a step")
      ->required()
      ->check(CLI::PositiveNumber);
  app.add_option("--length", options.length, "tokens a sequence (gpt-mini, bert-mini)")
      ->check(CLI::PositiveNumber);
  app.add_option("--learning-rate,--lr", options.learning_rate, "AdamW's learning rate")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--weight-decay", options.weight_decay, "AdamW's weight decay")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--schedule", schedule,
                 "constant, linear-warmup:WARMUP or warmup-cosine:WARMUP:TOTAL[:MIN_LR]");
  app.add_option("--target", target, "cpu (the CUDA backend is not built yet)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--cpu", options.cpu, "the CPU level the kernels are built for")
      ->check(CLI::IsMember({"x86-64-v2", "x86-64-v3", "x86-64-v4", "native"}));
  app.add_option("--memory-budget", options.memory_budget,
                 "bytes a step may allocate beyond its inputs (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", options.seed, "the seed of the initial weights and of dropout");
  app.add_option("--dropout", options.dropout,
                 "gpt-mini, bert-mini: the fraction of activations dropped in training")
      ->check(CLI::Range(0.0, 0.99));
  app.add_flag("--keep-sources", options.keep_sources, "write the kernels' source too");
  app.add_option("-o,--output", output, "the artifact folder to write (NAME.sinter)")->required();
  try {
    app.parse(argc, argv);
    options.schedule = parseSchedule(schedule);
  } catch (const CLI::CallForHelp &help) {
    return app.exit(help);
  } catch (const CLI::ParseError &error) {
    std::fprintf(stderr, "sinter-compile: %s (see --help)\n", error.what());
    return 2;
  }
  if (target == "cuda") {
    std::fprintf(stderr, "sinter-compile: --target cuda needs the CUDA backend, which this "
                         "build does not have yet; use --target cpu\n");
    return 2;
  }
  {
    // Before compiling: a folder there must be empty or an artifact.
    std::error_code error;
    std::filesystem::path at(output);
    if (std::filesystem::exists(at, error) &&
        !(std::filesystem::is_directory(at, error) &&
          (std::filesystem::is_empty(at, error) ||
           std::filesystem::exists(at / "manifest.json", error)))) {
      std::fprintf(stderr,
                   "sinter-compile: -o %s exists and is not an artifact; give another folder (its "
                   "files are left as they are)\n",
                   output.c_str());
      return 2;
    }
  }
  try {
    sinter::aot::ArtifactContents contents = sinter::tools::zooArtifact(options);
    sinter::aot::write_artifact(output, contents);
    std::printf("wrote %s: %s for %s (%s)\n", output.c_str(), options.model.c_str(),
                contents.target.triple.c_str(), contents.target.cpu.c_str());
    for (const sinter::aot::ArtifactFunction &function : contents.functions) {
      sinter::runtime::Allocation allocation = sinter::runtime::allocationOf(function.program);
      int64_t state = 0;
      for (size_t a = 0; a < function.program.arguments.size(); ++a)
        state += function.program.buffers[function.program.arguments[a]].bytes;
      std::printf("  %-10s planned memory: %s a step (arena %s) + %s of inputs and state\n",
                  function.name.c_str(), mib(allocation.arena + allocation.results).c_str(),
                  mib(function.program.arenaBytes).c_str(), mib(state).c_str());
    }
    std::string packages;
    for (const sinter::runtime::SharedLibrary &library : contents.shared_libraries)
      if (packages.find(library.package) == std::string::npos)
        packages += (packages.empty() ? "" : " ") + library.package;
    std::printf("to run it: libsinter_runtime and its Debian packages (libabsl20220623 "
                "libssl3), and the kernels': %s\n",
                packages.c_str());
  } catch (const sinter::Error &error) {
    std::fprintf(stderr, "sinter-compile: %s\n", error.what());
    return 2;
  }
  return 0;
}
