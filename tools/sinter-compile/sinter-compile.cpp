//===- sinter-compile.cpp - a zoo model's training step, ahead of time ----===//
//
// Writes an artifact (Note [Artifacts] in sinter/runtime/Artifact.h): the
// model's steady training step (AdamW) and its prediction function compiled
// for a CPU level, with its initial weights and optimizer state, for
// libsinter_runtime to run on another machine with no compiler:
//
//   sinter-compile --model mlp --batch-size 64 -o mlp.sinter
//
// or a training program's, which exports its own step when asked
// (Note [A training program, ahead of time] in sinter/Aot.h):
//
//   sinter-compile --program ./train -o mine.sinter -- --batch_size 32
//
// It prints each function's planned memory and what a machine that runs
// the artifact needs installed.
//
//===----------------------------------------------------------------------===//
#include "ToolMain.h"
#include "ZooArtifact.h"
#include "ZooTask.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

/// Runs `argv` with `env` added to this process's environment; its exit
/// status (128 + the signal when killed), or -1 when it cannot start.
int runProgram(const std::vector<std::string> &argv,
               const std::vector<std::pair<std::string, std::string>> &env) {
  pid_t child = fork();
  if (child < 0)
    return -1;
  if (child == 0) {
    for (const auto &[key, value] : env)
      setenv(key.c_str(), value.c_str(), 1);
    std::vector<char *> args;
    for (const std::string &arg : argv)
      args.push_back(const_cast<char *>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "sinter-compile: cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// The folder's inode (0: none): write_artifact puts a new folder in place.
ino_t folderId(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) ? info.st_ino : 0;
}

std::string mib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

/// After the command line: the artifact written, read back and described.
int compile(const sinter::tools::ZooArtifactOptions &options, const std::string &output,
            const std::string &target, const std::string &program,
            const std::vector<std::string> &programArgs) {
  if (target == "cuda") {
    // The step is recorded on cuda:0 and compiled, not run: the simulator
    // stands for the device (Note [CUDA artifacts] in
    // sinter/runtime/Artifact.h), so no GPU is needed to compile for one.
    setenv("SINTER_CUDA_SIMULATOR", "1", /*overwrite=*/0);
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
  if (!program.empty()) {
    // The program writes the artifact itself; it is checked like any.
    std::vector<std::string> argv = {program};
    argv.insert(argv.end(), programArgs.begin(), programArgs.end());
    std::vector<std::pair<std::string, std::string>> env = {
        {"SINTER_AOT_OUTPUT", std::filesystem::absolute(output).string()},
        {"SINTER_AOT_CPU", options.cpu},
        {"SINTER_AOT_KEEP_SOURCES", options.keep_sources ? "1" : "0"}};
    if (target == "cuda") {
      std::string archs;
      for (const std::string &arch : options.cuda_architectures)
        archs += (archs.empty() ? "" : ",") + arch;
      env.emplace_back("SINTER_DEVICE", "cuda");
      env.emplace_back("SINTER_CUDA_SIMULATOR", "1");
      env.emplace_back("SINTER_AOT_CUDA_ARCHS", archs);
    }
    if (options.memory_budget > 0)
      env.emplace_back("SINTER_MEMORY_BUDGET", std::to_string(options.memory_budget));
    ino_t before = folderId(output);
    std::fflush(stdout);
    int status = runProgram(argv, env);
    if (status != 0) {
      std::fprintf(stderr, "sinter-compile: %s %s; no artifact written\n", program.c_str(),
                   status < 0 ? "could not be started"
                              : ("exited with status " + std::to_string(status)).c_str());
      return 1;
    }
    ino_t after = folderId(output);
    if (after == 0 || after == before) {
      std::fprintf(stderr,
                   "sinter-compile: %s ran to its end without writing %s: when "
                   "sinter::aot::requested_artifact() returns a request, export with "
                   "sinter::aot::training_artifact and write_artifact (docs/AOT.md)\n",
                   program.c_str(), output.c_str());
      return 1;
    }
  } else {
    sinter::aot::write_artifact(output, sinter::tools::zooArtifact(options));
  }
  // What was written, read back as a runtime reads it (for the machine it
  // was built for: --cpu may name another).
  auto artifact = sinter::runtime::Artifact::open(output, /*forThisMachine=*/false);
  if (!artifact.ok()) {
    std::fprintf(stderr, "sinter-compile: the artifact does not open: %s\n",
                 std::string(artifact.status().message()).c_str());
    return 1;
  }
  const sinter::runtime::ArtifactTarget &t = (*artifact)->target();
  std::string archs;
  for (const std::string &arch : t.cudaArchitectures)
    archs += (archs.empty() ? "" : ", ") + arch;
  std::printf(
      "wrote %s: %s for %s (%s)\n", output.c_str(),
      ("model " + (*artifact)->model() + (program.empty() ? "" : " from " + program)).c_str(),
      t.kind == "cuda" ? "CUDA GPUs" : t.triple.c_str(),
      t.kind == "cuda" ? (archs + "; the CUDA simulator on " + t.triple).c_str() : t.cpu.c_str());
  for (const std::string &name : (*artifact)->functions()) {
    const sinter::runtime::Program &function = *(*artifact)->function(name);
    sinter::runtime::Allocation allocation = sinter::runtime::allocationOf(function);
    int64_t state = 0;
    for (size_t a = 0; a < function.arguments.size(); ++a)
      state += function.buffers[function.arguments[a]].bytes;
    std::printf("  %-10s planned memory: %s a step (arena %s) + %s of inputs and state\n",
                name.c_str(), mib(allocation.arena + allocation.results).c_str(),
                mib(function.arenaBytes).c_str(), mib(state).c_str());
  }
  std::string packages;
  for (const sinter::runtime::SharedLibrary &library : (*artifact)->sharedLibraries())
    if (packages.find(library.package) == std::string::npos)
      packages += (packages.empty() ? "" : " ") + library.package;
  if (t.kind == "cuda")
    std::printf("to run it on a GPU: libsinter_runtime, the NVIDIA driver and cuBLAS; on the "
                "CUDA simulator (SINTER_CUDA_SIMULATOR=1) also libsinter_cuda_simulator and: %s\n",
                packages.c_str());
  else
    std::printf("to run it: libsinter_runtime and its Debian packages (libabsl20220623 "
                "libssl3), and the kernels': %s\n",
                packages.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Compiles a zoo model's training step and prediction ahead of time, or a training "
               "program's, into an artifact that libsinter_runtime runs with no compiler.",
               "sinter-compile"};
  sinter::tools::ZooArtifactOptions options;
  std::string output, target = "cpu", schedule = "constant", program;
  std::vector<std::string> programArgs;
  auto *model = app.add_option("--model", options.model, sinter::tools::kZooModels)
                    ->check(CLI::IsMember({"mlp", "lenet", "resnet18", "gpt-mini", "bert-mini"}));
  auto *programOption =
      app.add_option("--program", program,
                     "a training program (as sinter-train runs one) that exports its step when "
                     "sinter::aot::requested_artifact() asks; its arguments after --")
          ->check(CLI::ExistingFile);
  model->excludes(programOption);
  // What only a zoo model takes (a program decides its own).
  std::vector<CLI::Option *> zooOnly = {
      app.add_option("--batch-size", options.batch, "samples a step")->check(CLI::PositiveNumber),
      app.add_option("--length", options.length, "tokens a sequence (gpt-mini, bert-mini)")
          ->check(CLI::PositiveNumber),
      app.add_option("--learning-rate,--lr", options.learning_rate, "AdamW's learning rate")
          ->check(CLI::NonNegativeNumber),
      app.add_option("--weight-decay", options.weight_decay, "AdamW's weight decay")
          ->check(CLI::NonNegativeNumber),
      app.add_option("--schedule", schedule,
                     "constant, linear-warmup:WARMUP or warmup-cosine:WARMUP:TOTAL[:MIN_LR]"),
      app.add_option("--seed", options.seed, "the seed of the initial weights and of dropout"),
      app.add_option("--dropout", options.dropout,
                     "gpt-mini, bert-mini: the fraction of activations dropped in training")
          ->check(CLI::Range(0.0, 0.99))};
  std::string archs = "sm_80,sm_90,compute_90";
  app.add_option("--target", target,
                 "cpu, or cuda (cubins for --arch, and the CUDA simulator's build)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  auto *archOption = app.add_option("--arch", archs,
                                    "--target cuda: the GPU architectures, comma-separated: sm_NN "
                                    "(a cubin) or compute_NN (PTX the driver compiles)");
  app.add_option("--cpu", options.cpu, "the CPU level the kernels are built for")
      ->check(CLI::IsMember({"x86-64-v2", "x86-64-v3", "x86-64-v4", "native"}));
  app.add_option("--memory-budget", options.memory_budget,
                 "bytes a step may allocate beyond its inputs (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--keep-sources", options.keep_sources, "write the kernels' source too");
  app.add_option("-o,--output", output, "the artifact folder to write (NAME.sinter)")->required();
  app.add_option("program-args", programArgs, "--program's arguments (after --)");
  app.callback([&] {
    if (model->count() == 0 && programOption->count() == 0)
      throw CLI::RequiredError("--model or --program");
    for (CLI::Option *option : zooOnly) {
      if (programOption->count() > 0 && option->count() > 0)
        throw CLI::ValidationError(option->get_name(),
                                   "is a zoo model's; a --program decides its own (pass its "
                                   "arguments after --)");
    }
    if (model->count() > 0 && options.batch == 0)
      throw CLI::RequiredError("--batch-size");
    if (model->count() > 0 && !programArgs.empty())
      throw CLI::ValidationError("program-args", "are --program's; --model takes none");
    options.schedule = parseSchedule(schedule);
    if (archOption->count() > 0 && target != "cuda")
      throw CLI::ValidationError("--arch", "is for --target cuda");
    auto list = sinter::runtime::cudaArchitectureList(archs);
    if (!list.ok())
      throw CLI::ValidationError("--arch", std::string(list.status().message()));
    options.cuda_architectures = std::move(*list);
    if (options.cuda_architectures.empty())
      throw CLI::ValidationError("--arch", "names no architecture");
    if (target != "cuda")
      options.cuda_architectures.clear();
  });
  return sinter::tools::toolMain(
      app, argc, argv, [&] { return compile(options, output, target, program, programArgs); });
}
