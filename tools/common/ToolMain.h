//===- ToolMain.h - main() of a tool on Sinter's API ------------*- C++ -*-===//
#ifndef SINTER_TOOLS_TOOLMAIN_H
#define SINTER_TOOLS_TOOLMAIN_H

#include "CommandLine.h"

#include <functional>

namespace sinter::tools {

/// A tool's main(): parses the command line with `app` (parseCommandLine),
/// then returns what `run` returns. A sinter::Error (input the API refused)
/// is said as "TOOL: MESSAGE" and exits with status 2, as a refused command
/// line does; any other exception, which no check named (a bug to report),
/// is said as "TOOL: error: MESSAGE" with the same status, not an abort.
int toolMain(CLI::App &app, int argc, char **argv, const std::function<int()> &run);

} // namespace sinter::tools

#endif // SINTER_TOOLS_TOOLMAIN_H
