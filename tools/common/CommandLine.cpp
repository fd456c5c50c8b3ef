//===- CommandLine.cpp - how every tool reads its command line ------------===//
#include "CommandLine.h"

#include <cstdio>

namespace sinter::tools {

std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &help) {
    return app.exit(help);
  } catch (const CLI::ParseError &error) {
    std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), error.what());
    return 2;
  }
  return std::nullopt;
}

void lastValueWinsAndDefaultsShown(CLI::App &app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->always_capture_default();
}

} // namespace sinter::tools
