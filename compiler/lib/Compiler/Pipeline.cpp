//===- Pipeline.cpp - the compiler's driver, from lazy graphs to Programs --===//
//
// The whole compilation of a step, top to bottom: lower the lazy graphs into
// one module, run the pass pipeline (sinter/Passes/PassPipeline.h), write the
// kernels for the target, translate each function into a Program and plan its
// memory (ProgramTranslation.h), dump what debugging asks for, and build the
// kernels. Each stage lives in its own file; this one only chains them.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/Pipeline.h"

#include "sinter/Codegen/CudaKernels.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Compiler/LowerLazyGraph.h"
#include "sinter/Compiler/ProgramTranslation.h"
#include "sinter/Passes/PassPipeline.h"
#include "sinter/Passes/Passes.h"
#include "sinter/lazy/Graph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

namespace sinter::compiler {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Writes `text` to `<dumpDir>/<tag><suffix>`, or to stderr without a folder.
void dump(const DebugOptions &debug, const std::string &suffix, const std::string &text) {
  if (debug.dumpDir.empty()) {
    llvm::errs() << "// ----- sinter: " << debug.tag << suffix << " -----\n" << text << "\n";
    return;
  }
  std::error_code ec = llvm::sys::fs::create_directories(debug.dumpDir);
  std::string path = debug.dumpDir + "/" + debug.tag + suffix;
  llvm::raw_fd_ostream file(path, ec);
  if (ec) {
    llvm::errs() << "sinter: cannot write " << path << ": " << ec.message() << "\n";
    return;
  }
  file << text;
}

/// The graphs as one module, a function each: "step" alone, or "op<i>".
mlir::OwningOpRef<mlir::ModuleOp>
lowerGraphs(mlir::MLIRContext &context, const std::vector<std::vector<lazy::NodePtr>> &graphs) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::string name = graphs.size() == 1 ? "step" : "op" + std::to_string(i);
    mlir::OwningOpRef<mlir::ModuleOp> one = lowerLazyGraph(context, graphs[i], name);
    if (!one)
      return nullptr;
    for (mlir::func::FuncOp function :
         llvm::make_early_inc_range(one->getOps<mlir::func::FuncOp>())) {
      function->remove();
      module->getBody()->push_back(function);
    }
  }
  return module;
}

/// What one run of the pipeline made of a module.
struct Planned {
  codegen::RenderedKernels kernels;
  std::vector<runtime::Program> programs; // one per function
  std::vector<std::string> planReports;   // one per function
};

/// Runs the pass pipeline on `module` (under `budget` bytes, 0: none), writes
/// its kernels for `target` and plans each function's Program.
mlir::LogicalResult passRenderAndPlan(mlir::ModuleOp module, const codegen::Target &target,
                                      int64_t budget, const DebugOptions &debug,
                                      const std::vector<std::vector<bool>> *donatable,
                                      Planned &planned, CompileSeconds &times) {
  Clock::time_point start = Clock::now();
  std::string passLog;
  llvm::raw_string_ostream passes(passLog);
  mlir::PassManager pm(module.getContext());
  if (debug.level >= 4) {
    module.getContext()->disableMultithreading();
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, passes);
  }
  // The passes see which arguments may be donated, as buffer assignment
  // will (Note [Donation]): none when the caller says nothing.
  for (auto [f, function] : llvm::enumerate(module.getOps<mlir::func::FuncOp>())) {
    llvm::SmallVector<bool> flags(function.getNumArguments(), false);
    if (donatable != nullptr && f < donatable->size())
      for (size_t a = 0; a < flags.size() && a < (*donatable)[f].size(); ++a)
        flags[a] = (*donatable)[f][a];
    function->setAttr(passes::kDonatableAttr,
                      mlir::DenseBoolArrayAttr::get(module.getContext(), flags));
  }
  passes::buildPipeline(pm, {.explain = debug.level >= 2,
                             .memoryBudget = budget,
                             .memory = codegen::memoryRules(target),
                             .fusion = codegen::fusionRules(target)});
  mlir::LogicalResult passed = pm.run(module);
  for (mlir::func::FuncOp function : module.getOps<mlir::func::FuncOp>())
    function->removeAttr(passes::kDonatableAttr);
  times.passes += secondsSince(start);
  if (debug.level >= 4)
    dump(debug, ".passes.mlir", passLog);
  if (mlir::failed(passed))
    return mlir::failure();

  start = Clock::now();
  mlir::FailureOr<codegen::RenderedKernels> kernels = target.render(module);
  times.codegen += secondsSince(start);
  if (mlir::failed(kernels))
    return mlir::failure();
  planned.kernels = std::move(*kernels);

  planned.programs.clear();
  planned.planReports.clear();
  int kernel = 0;
  size_t f = 0;
  for (mlir::func::FuncOp function : module.getOps<mlir::func::FuncOp>()) {
    runtime::Program &program = planned.programs.emplace_back();
    program.kernelPrefix = planned.kernels.prefix;
    const std::vector<bool> *donatableHere =
        donatable != nullptr && f < donatable->size() ? &(*donatable)[f] : nullptr;
    ++f;
    if (mlir::failed(planFunction(function, target, planned.kernels, kernel, donatableHere, program,
                                  planned.planReports.emplace_back())))
      return mlir::failure();
  }
  planned.kernels.plans = {}; // asked by planning only; the step keeps the source
  return mlir::success();
}

bool lowerAndPlan(const std::vector<std::vector<lazy::NodePtr>> &graphs,
                  const codegen::Target &target, std::vector<runtime::Program> &programs,
                  StepBuild &step, std::string &error, const DebugOptions &debug, bool buildKernels,
                  const std::vector<std::vector<bool>> *donatable, int64_t memoryBudget) {
  mlir::MLIRContext context;
  context.loadDialect<ir::SinterDialect, mlir::func::FuncDialect>();
  llvm::raw_string_ostream diagnostics(error);
  std::string fusionReport;
  llvm::raw_string_ostream fusion(fusionReport);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    llvm::raw_string_ostream &os =
        diagnostic.getSeverity() == mlir::DiagnosticSeverity::Remark ? fusion : diagnostics;
    os << diagnostic.getLocation() << ": " << diagnostic << "\n";
    return mlir::success();
  });

  Clock::time_point start = Clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module = lowerGraphs(context, graphs);
  step.times.lower = secondsSince(start);
  if (!module)
    return false;

  // Note [Fitting a memory budget]: the budget covers the arena, with the
  // results in it (Note [Results in the arena]), and the results the caller
  // allocates (copies, rare); the rematerialization pass trades within it,
  // simulating the arena as buffer assignment will plan it (Note [One memory
  // model] in sinter/Passes/MemoryPlanner.h): its estimate
  // (`sinter.estimated_peak`) is the planned arena, so the pipeline runs
  // once. The loop below is for what the IR cannot know yet (Note [What the
  // IR's dataflow does not know] in passes/lib/Dataflow.h): when the
  // planned step is over the budget while the estimate was within the
  // arena's share, the pipeline runs again from the lowered module with the
  // share lowered by the excess (at most kBudgetAttempts times). Not when
  // the estimate stayed over the share: the pass ran out of trades, and
  // every lower share trades the same. On a target whose results are the
  // caller's (TargetDescription::resultsInArena false: a CUDA device) the
  // arena's share starts at the whole budget too, so a step whose results
  // push it over is planned twice: the second time with the share lowered
  // by their bytes.
  constexpr int kBudgetAttempts = 5;
  bool budgeted = memoryBudget > 0 && graphs.size() == 1;
  int64_t arenaBudget = budgeted ? memoryBudget : 0;
  mlir::OwningOpRef<mlir::ModuleOp> lowered;
  if (budgeted)
    lowered = module->clone();
  Planned planned;
  int attempt = 0;
  for (;; ++attempt) {
    fusionReport.clear();
    mlir::LogicalResult made =
        passRenderAndPlan(*module, target, budgeted ? std::max<int64_t>(1, arenaBudget) : 0, debug,
                          donatable, planned, step.times);
    if (debug.level >= 2)
      dump(debug, ".fusion.txt", fusionReport);
    if (mlir::failed(made))
      return false;
    if (!budgeted || attempt + 1 == kBudgetAttempts)
      break;
    runtime::Allocation allocation = runtime::allocationOf(
        planned.programs.front(), [&](int64_t bytes) { return target.allocationSize(bytes); });
    int64_t bytes = allocation.arena + allocation.results;
    if (bytes <= memoryBudget)
      break;
    // The trades could not reach the arena's share: a lower share would
    // trade the same, to the same plan.
    auto estimated = (*module->getOps<mlir::func::FuncOp>().begin())
                         ->getAttrOfType<mlir::IntegerAttr>("sinter.estimated_peak");
    if (estimated && estimated.getInt() > std::max<int64_t>(1, arenaBudget))
      break;
    // Packing may need more than the bytes live at once, and trades come in
    // whole values, so a small excess may need a larger cut: at least a
    // sixteenth.
    arenaBudget -= std::max(bytes - memoryBudget, arenaBudget / 16);
    module = lowered->clone();
  }
  step.kernels = planned.kernels.count;
  programs = std::move(planned.programs);
  // Note [Step scalars as formulas]: an argument whose data node records
  // its formula is a step scalar (Note [The step's signature]).
  for (auto [graph, program] : llvm::zip(graphs, programs)) {
    size_t a = 0;
    for (const lazy::Node *node : lazy::topological_order(graph)) {
      if (node->op != lazy::Op::Data)
        continue;
      if (a < program.signature.arguments.size() && node->formula) {
        program.signature.arguments[a].role = runtime::Program::Role::StepScalar;
        program.signature.arguments[a].formula = node->formula;
      }
      ++a;
    }
  }
  for (auto [function, program] : llvm::zip(module->getOps<mlir::func::FuncOp>(), programs)) {
    program.report.pipelineRuns = attempt + 1;
    if (auto estimated = function->getAttrOfType<mlir::IntegerAttr>("sinter.estimated_peak"))
      program.report.estimatedArenaBytes = estimated.getInt();
  }

  llvm::raw_string_ostream ir(step.ir);
  module->print(ir);
  if (debug.level >= 2)
    dump(debug, ".mlir", step.ir);
  if (debug.level >= 3)
    dump(debug, ".kernels" + target.description().sourceSuffix, planned.kernels.source);
  if (debug.level >= 2) {
    size_t f = 0;
    for (mlir::func::FuncOp function : module->getOps<mlir::func::FuncOp>())
      dump(debug, (llvm::Twine(".") + function.getSymName() + ".plan.txt").str(),
           planned.planReports[f++]);
  }

  step.source = planned.kernels.source;
  start = Clock::now();
  if (buildKernels) {
    StatusOr<codegen::BuiltKernels> built = target.build(planned.kernels);
    if (!built.ok()) {
      diagnostics << std::string(built.status().message());
      return false;
    }
    step.library = built->path;
    step.cacheHit = built->cacheHit;
    for (runtime::Program &program : programs)
      program.library = built->path;
  }
  step.times.build = secondsSince(start);
  return true;
}

} // namespace

bool compileGraphs(const std::vector<std::vector<lazy::NodePtr>> &graphs,
                   const codegen::Target &target, std::vector<runtime::Program> &programs,
                   StepBuild &step, std::string &error, const DebugOptions &debug,
                   const std::vector<std::vector<bool>> *donatable, int64_t memoryBudget) {
  return lowerAndPlan(graphs, target, programs, step, error, debug, /*buildKernels=*/true,
                      donatable, memoryBudget);
}

bool planStep(const std::vector<lazy::NodePtr> &outputs, const codegen::Target &target,
              runtime::Program &program, StepBuild &step, std::string &error,
              const std::vector<bool> *donatable, int64_t memoryBudget) {
  std::vector<runtime::Program> programs;
  std::vector<std::vector<bool>> perGraph;
  if (donatable != nullptr)
    perGraph.push_back(*donatable);
  if (!lowerAndPlan({outputs}, target, programs, step, error, {}, /*buildKernels=*/false,
                    donatable != nullptr ? &perGraph : nullptr, memoryBudget))
    return false;
  program = std::move(programs.front());
  return true;
}

bool renderCudaStep(const std::vector<lazy::NodePtr> &outputs, CudaStepSource &step,
                    std::string &error) {
  mlir::MLIRContext context;
  context.loadDialect<ir::SinterDialect, mlir::func::FuncDialect>();
  llvm::raw_string_ostream diagnostics(error);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() != mlir::DiagnosticSeverity::Remark)
      diagnostics << diagnostic.getLocation() << ": " << diagnostic << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = lowerGraphs(context, {outputs});
  if (!module)
    return false;
  // The pipeline as a step compiled for the simulator's CUDA target plans it.
  mlir::PassManager pm(&context);
  const codegen::Target &cuda = codegen::cudaTarget();
  passes::buildPipeline(
      pm, {.memory = codegen::memoryRules(cuda), .fusion = codegen::fusionRules(cuda)});
  if (mlir::failed(pm.run(*module)))
    return false;
  codegen::CudaKernels kernels = codegen::renderCudaKernels(*module, "sinter_kernel_");
  step.source = std::move(kernels.source);
  step.kernels = kernels.count;
  step.written.clear();
  for (int64_t k = 0; k < kernels.count; ++k)
    if (kernels.written[k])
      step.written.push_back("sinter_kernel_" + std::to_string(k));
  return true;
}

bool compileStep(const std::vector<lazy::NodePtr> &outputs, const codegen::Target &target,
                 StepBuild &step, std::string &error, const DebugOptions &debug) {
  std::vector<runtime::Program> programs;
  if (!compileGraphs({outputs}, target, programs, step, error, debug))
    return false;
  step.program = std::move(programs.front());
  return true;
}

} // namespace sinter::compiler
