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
#include "Flags.h"
#include "ZooTask.h"

#include "sinter/Codegen/Target.h"
#include "sinter/Compiler/LowerLazyGraph.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/sinter.h"

#include "absl/flags/flag.h"

#include <cstdio>

ABSL_FLAG(std::string, model, "mlp", "mlp, lenet, resnet18, gpt-mini, bert-mini, gpt2 or bert-base");
ABSL_FLAG(int64_t, batch_size, 4, "batch size of the step");
ABSL_FLAG(int64_t, length, 16, "sequence length (gpt-mini, bert-mini)");
ABSL_FLAG(std::string, optimizer, "adamw", "adamw, sgd, or none (forward, loss and backward only)");
ABSL_FLAG(bool, locations, false, "print each op's source location");
ABSL_FLAG(bool, compile, false,
          "run the pass pipeline, print the fused IR, and compile every kernel for the CPU "
          "(a summary line goes to stderr)");

namespace {

using namespace sinter;

int run() {
  const std::string name = absl::GetFlag(FLAGS_model);
  const int64_t batch = absl::GetFlag(FLAGS_batch_size), length = absl::GetFlag(FLAGS_length);
  SINTER_CHECK(batch > 0 && length > 0, Loc::current(),
               "--batch_size and --length must be positive");
  // Parameters and inputs are data, as at the start of any step after the
  // first: computed on the reference executor (this tool records a step; it
  // installs no step compiler to run one).
  Session::Use session({.compiler = {.use_reference = true}});
  tools::ZooTask task = tools::makeZooTask(name, batch, length);
  std::shared_ptr<nn::Module> model = task.model;
  std::unique_ptr<optim::Optimizer> optimizer;
  const std::string which = absl::GetFlag(FLAGS_optimizer);
  if (which == "adamw")
    optimizer = std::make_unique<optim::AdamW>(model->parameters());
  else if (which == "sgd")
    optimizer =
        std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{.momentum = 0.9});
  else
    SINTER_CHECK(which == "none", Loc::current(), "unknown --optimizer '" + which + "'");
  std::vector<lazy::NodePtr> outputs = tools::recordStep(task, optimizer.get());
  if (absl::GetFlag(FLAGS_compile)) {
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
  if (!compiler::lowerLazyGraphToText(outputs, text, absl::GetFlag(FLAGS_locations),
                                      "train_step")) {
    std::fprintf(stderr, "sinter-dump-step: the recorded graph does not verify:\n%s", text.c_str());
    return 1;
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return sinter::tools::toolMain(argc, argv, "sinter-dump-step",
                                 "Prints one training step of a zoo model as sinter IR.", run);
}
