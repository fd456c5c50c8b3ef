//===- Flags.cpp - command lines of the tools -----------------------------===//
#include "Flags.h"

#include "absl/flags/parse.h"

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

} // namespace sinter::tools
