//===- sinter-dump-step.cpp - print a model's training step as sinter IR --===//
//
// Records one training step of a zoo model (forward, loss, backward and the
// optimizer update, exactly as a training loop would) and prints the graph
// that mark_step() hands to the compiler, lowered to the sinter dialect: one
// function whose arguments are the step's data (parameters, optimizer state,
// batch) and whose results are the loss and the updated parameters.
//
//   sinter-dump-step --model gpt-mini | sinter-opt --canonicalize --cse
//   sinter-dump-step --model gpt-mini --compile   (fuse, and compile the kernels)
//
//===----------------------------------------------------------------------===//
#include "ToolMain.h"
#include "ZooTask.h"

#include "sinter/Codegen/Target.h"
#include "sinter/Compiler/LowerLazyGraph.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/sinter.h"

#include <cstdio>

namespace {

using namespace sinter;

/// The command line: one field per flag (their help in main()).
struct Options {
  std::string model = "mlp";
  int64_t batchSize = 4;
  int64_t length = 16;
  std::string optimizer = "adamw";
  bool locations = false;
  bool compile = false;
};

int run(const Options &flags) {
  const std::string &name = flags.model;
  const int64_t batch = flags.batchSize, length = flags.length;
  SINTER_CHECK(batch > 0 && length > 0, Loc::current(),
               "--batch-size and --length must be positive");
  // Parameters and inputs are data, as at the start of any step after the
  // first: computed on the reference executor (this tool records a step; it
  // installs no step compiler to run one).
  Session::Use session({.compiler = {.use_reference = true}});
  tools::ZooTask task = tools::makeZooTask(name, batch, length);
  std::shared_ptr<nn::Module> model = task.model;
  std::unique_ptr<optim::Optimizer> optimizer;
  const std::string &which = flags.optimizer;
  if (which == "adamw")
    optimizer = std::make_unique<optim::AdamW>(model->parameters());
  else if (which == "sgd")
    optimizer =
        std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{.momentum = 0.9});
  else
    SINTER_CHECK(which == "none", Loc::current(), "unknown --optimizer '" + which + "'");
  std::vector<lazy::NodePtr> outputs = tools::recordStep(task, optimizer.get());
  if (flags.compile) {
    compiler::StepBuild step;
    std::string error;
    if (!compiler::compileStep(outputs, codegen::cpuTarget(), step, error)) {
      std::fprintf(stderr, "sinter-dump-step: compiling the step failed:\n%s", error.c_str());
      return 1;
    }
    std::fputs(step.ir.c_str(), stdout);
    std::fprintf(stderr, "sinter-dump-step: %s: %lld kernels compiled into %s%s\n", name.c_str(),
                 static_cast<long long>(step.kernels), step.library.c_str(),
                 step.cacheHit ? " (from the cache)" : "");
    return 0;
  }
  std::string text;
  if (!compiler::lowerLazyGraphToText(outputs, text, flags.locations, "train_step")) {
    std::fprintf(stderr, "sinter-dump-step: the recorded graph does not verify:\n%s", text.c_str());
    return 1;
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Prints one training step of a zoo model as sinter IR.", "sinter-dump-step"};
  // As the Abseil flags these were: each also with underscores.
  sinter::tools::lastValueWinsAndDefaultsShown(app);
  Options flags;
  app.add_option("--model", flags.model,
                 "mlp, lenet, resnet18, gpt-mini, bert-mini, gpt2 or bert-base");
  app.add_option("--batch-size,--batch_size", flags.batchSize, "batch size of the step");
  app.add_option("--length", flags.length, "sequence length (gpt-mini, bert-mini)");
  app.add_option("--optimizer", flags.optimizer,
                 "adamw, sgd, or none (forward, loss and backward only)");
  app.add_flag("--locations", flags.locations, "print each op's source location");
  app.add_flag("--compile", flags.compile,
               "run the pass pipeline, print the fused IR, and compile every kernel for the CPU "
               "(a summary line goes to stderr)");
  return sinter::tools::toolMain(app, argc, argv, [&] { return run(flags); });
}
