//===- CompilerSettings.cpp - the compiler's settings and registry --------===//
//
// What the lazy graph library (sinter_graph) holds for the compiler: the
// settings of the process (CompilerConfig, defaults from the environment)
// and the installed step compiler. The compiler library links this small
// library, not the whole frontend (nn, data, tokenizers, checkpoints).
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler.h"
#include "sinter/Error.h"
#include "sinter/Metrics.h"
#include "sinter/runtime/Environment.h"

#include <memory>
#include <mutex>
#include <string>

namespace sinter {

namespace {
struct CompilerState {
  std::mutex mutex;
  // The defaults from the environment, read once (Note [The environment,
  // read once] in sinter/runtime/Environment.h).
  CompilerConfig config = [] {
    const runtime::Environment &env = runtime::environment();
    CompilerConfig config;
    config.enabled = env.compiler_enabled;
    config.use_reference = env.use_reference;
    config.debug = env.debug;
    config.dump_dir = env.dump_dir;
    config.check_numerics = env.check_numerics;
    config.memory_budget = env.memory_budget;
    config.memory_limit = env.memory_limit;
    return config;
  }();
  std::shared_ptr<detail::StepCompiler> compiler;
};
CompilerState &compilerState() {
  static CompilerState *state = new CompilerState();
  return *state;
}
} // namespace

void set_compiler_config(const CompilerConfig &config, std::source_location where) {
  SINTER_CHECK(config.memory_budget >= 0, where,
               "CompilerConfig::memory_budget is " + std::to_string(config.memory_budget) +
                   " bytes; it must be 0 (no budget) or positive");
  SINTER_CHECK(config.memory_limit >= 0, where,
               "CompilerConfig::memory_limit is " + std::to_string(config.memory_limit) +
                   " bytes; it must be 0 (the system's available memory) or positive");
  SINTER_CHECK(config.check_numerics >= 0 && config.check_numerics <= 2, where,
               "CompilerConfig::check_numerics is " + std::to_string(config.check_numerics) +
                   "; it must be 0 (off), 1 (NaN) or 2 (NaN and infinities)");
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  compilerState().config = config;
}

CompilerConfig compiler_config() {
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  return compilerState().config;
}

void detail::register_step_compiler(std::shared_ptr<StepCompiler> compiler) {
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  compilerState().compiler = std::move(compiler);
}

std::shared_ptr<detail::StepCompiler> detail::step_compiler() {
  std::lock_guard<std::mutex> lock(compilerState().mutex);
  return compilerState().compiler;
}

CompileSeconds &CompileSeconds::operator+=(const CompileSeconds &other) {
  lower += other.lower;
  passes += other.passes;
  codegen += other.codegen;
  build += other.build;
  return *this;
}

} // namespace sinter
