//===- UserProgram.cpp - a job that runs the user's program ---------------===//
#include "UserProgram.h"

#include "sinter/runtime/Environment.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace sinter::tools {

int launchProgram(const Job &job, const std::string &device) {
  std::vector<std::string> args = {job.entry_point};
  for (const auto &[key, value] : job.hyperparameters.items()) {
    args.push_back(std::string("--").append(key));
    args.push_back(value.is_string() ? value.get<std::string>() : value.dump());
  }
  std::map<std::string, std::string> env = {
      {"SINTER_JOB", job.resolved.dump()},
      {"SINTER_HYPERPARAMETERS", job.hyperparameters.dump()},
      {"SINTER_OUTPUT_DIR", job.output_dir},
      {"SINTER_DATASET", job.dataset},
      {"SINTER_COMPILER", job.compiler_enabled ? "1" : "0"},
      {"SINTER_MEMORY_BUDGET", std::to_string(job.memory_budget)},
      {"SINTER_MEMORY_BUDGET_HARD", job.memory_budget_hard ? "1" : "0"},
      {"SINTER_ALLOW_FALLBACK", job.allow_fallback ? "1" : "0"},
  };
  if (!device.empty())
    env["SINTER_DEVICE"] = device;
  if (job.compiler_debug) {
    env.insert_or_assign("SINTER_DEBUG", "4");
    env["SINTER_DUMP_DIR"] = job.output_dir + "/debug";
  }
  if (job.check_numerics)
    env["SINTER_CHECK_NUMERICS"] =
        std::to_string(std::max(runtime::environment().check_numerics, 1));
  std::printf("launching %s", job.entry_point.c_str());
  for (size_t i = 1; i < args.size(); ++i)
    std::printf(" %s", args[i].c_str());
  std::printf("\n");
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0)
    throw JobError("entry_point", std::string("cannot start a process: ") + std::strerror(errno));
  if (child == 0) {
    for (const auto &[key, value] : env)
      setenv(key.c_str(), value.c_str(), 1);
    std::vector<char *> argv;
    for (std::string &arg : args)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(job.entry_point.c_str(), argv.data());
    std::fprintf(stderr, "sinter-train: cannot run %s: %s\n", job.entry_point.c_str(),
                 std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status)) {
    std::printf("%s exited with status %d\n", job.entry_point.c_str(), WEXITSTATUS(status));
    return WEXITSTATUS(status);
  }
  std::printf("%s was killed by signal %d\n", job.entry_point.c_str(), WTERMSIG(status));
  return 128 + WTERMSIG(status);
}

} // namespace sinter::tools
