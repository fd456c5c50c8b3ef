//===- Flags.h - command lines of the tools -------------------*- C++ -*-===//
#ifndef SINTER_TOOLS_FLAGS_H
#define SINTER_TOOLS_FLAGS_H

#include <functional>
#include <string>
#include <vector>

namespace sinter::tools {

/// The command line with dashes inside flag names turned into the
/// underscores Abseil's flags are named with, so that `--batch-size 8` and
/// `--batch_size=8` mean the same. Values and positional arguments are left
/// as they are; everything after a bare `--` too.
std::vector<std::string> normalizeFlagNames(int argc, char **argv);

/// Parses `args` (from normalizeFlagNames) with Abseil, returning the
/// positional arguments (program name first).
std::vector<char *> parseFlags(std::vector<std::string> &args);

/// A tool's main(): sets the usage line, parses the flags (with dashes or
/// underscores), refuses positional arguments, and returns what `run`
/// returns; a sinter::Error (bad input) is printed after the tool's name
/// and exits with status 2, as do unknown arguments.
int toolMain(int argc, char **argv, const char *name, const char *usage,
             const std::function<int()> &run);

} // namespace sinter::tools

#endif // SINTER_TOOLS_FLAGS_H
