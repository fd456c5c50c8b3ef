//===- Flags.cpp - command lines of the tools -----------------------------===//
#include "Flags.h"

#include "sinter/Error.h"

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"

#include <cstdio>

namespace sinter::tools {

std::vector<std::string> normalizeFlagNames(int argc, char **argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string &arg = args[i];
    if (arg == "--")
      break;
    if (arg.size() < 3 || arg[0] != '-')
      continue;
    size_t start = arg[1] == '-' ? 2 : 1, end = arg.find('=');
    for (size_t k = start; k < std::min(end, arg.size()); ++k)
      if (arg[k] == '-')
        arg[k] = '_';
  }
  return args;
}

std::vector<char *> parseFlags(std::vector<std::string> &args) {
  std::vector<char *> pointers;
  for (std::string &arg : args)
    pointers.push_back(arg.data());
  return absl::ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
}

int toolMain(int argc, char **argv, const char *name, const char *usage,
             const std::function<int()> &run) {
  absl::SetProgramUsageMessage(usage);
  std::vector<std::string> args = normalizeFlagNames(argc, argv);
  std::vector<char *> rest = parseFlags(args);
  if (rest.size() > 1) {
    std::fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", name, rest[1]);
    return 2;
  }
  try {
    return run();
  } catch (const Error &error) {
    std::fprintf(stderr, "%s: %s\n", name, error.what());
    return 2;
  }
}

} // namespace sinter::tools
