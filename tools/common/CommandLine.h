//===- CommandLine.h - how every tool reads its command line ----*- C++ -*-===//
//
// Every tool parses its flags with CLI11 and answers a command line in one
// way: --help prints the help on stdout and exits 0; anything CLI11 refuses
// (an unknown flag, a value that does not convert or fails its check, a
// missing required option) is one line on stderr, "TOOL: MESSAGE (see
// --help)", and exit status 2, the status of every input a tool refuses.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_COMMANDLINE_H
#define SINTER_TOOLS_COMMANDLINE_H

#include <CLI/CLI.hpp>

#include <optional>

namespace sinter::tools {

/// Parses `argv` with `app` (named after the tool). Returns the status the
/// tool exits with when it must stop there: 0 after --help, 2 after a
/// refused command line (said as above); nullopt when it goes on. Checks
/// that span several options belong in `app.callback(...)`, which runs
/// within the parse: a CLI::ParseError thrown there is refused the same way.
std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv);

/// Options added to `app` after this behave as the Abseil flags these tools
/// had: the last of a repeated flag wins, and --help shows each default.
void lastValueWinsAndDefaultsShown(CLI::App &app);

} // namespace sinter::tools

#endif // SINTER_TOOLS_COMMANDLINE_H
