//===- StepCompilerRegistry.cpp - the installed step compiler -------------===//
//
// What the lazy graph library (sinter_graph) holds for the compiler: the
// installed step compiler, one per process (a registry of code, not a
// setting: settings are a session's, Note [Sessions] in sinter/Session.h).
// The compiler library links this small library, not the whole frontend
// (nn, data, tokenizers, checkpoints).
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler.h"
#include "sinter/Metrics.h"

#include <memory>
#include <mutex>

namespace sinter {

namespace {
struct Registry {
  std::mutex mutex;
  std::shared_ptr<detail::StepCompiler> compiler;
};
Registry &registry() {
  static Registry *state = new Registry();
  return *state;
}
} // namespace

void detail::register_step_compiler(std::shared_ptr<StepCompiler> compiler) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().compiler = std::move(compiler);
}

std::shared_ptr<detail::StepCompiler> detail::step_compiler() {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().compiler;
}

CompileSeconds &CompileSeconds::operator+=(const CompileSeconds &other) {
  lower += other.lower;
  passes += other.passes;
  codegen += other.codegen;
  build += other.build;
  return *this;
}

} // namespace sinter
