//===- ToolMain.cpp - main() of a tool on Sinter's API --------------------===//
#include "ToolMain.h"

#include "sinter/Error.h"

#include <cstdio>
#include <exception>

namespace sinter::tools {

int toolMain(CLI::App &app, int argc, char **argv, const std::function<int()> &run) {
  if (std::optional<int> status = parseCommandLine(app, argc, argv))
    return *status;
  const char *name = app.get_name().c_str();
  try {
    return run();
  } catch (const Error &error) {
    std::fprintf(stderr, "%s: %s\n", name, error.what());
    return 2;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s: error: %s\n", name, error.what());
    return 2;
  }
}

} // namespace sinter::tools
