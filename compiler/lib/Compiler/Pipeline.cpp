//===- Pipeline.cpp - the compiler's pass pipeline, as one chain -----------===//
#include "sinter/Compiler/Pipeline.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Compiler/LowerLazyGraph.h"
#include "sinter/Passes/FusionPolicy.h"
#include "sinter/Passes/MemoryPlanner.h"
#include "sinter/Passes/Passes.h"
#include "sinter/runtime/Allocator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace sinter::compiler {

void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterFusion({.explain = options.explain}));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterSchedule());
  pm.addNestedPass<mlir::func::FuncOp>(
      createSinterRematerialize({.budget = options.memoryBudget, .explain = options.explain}));
  pm.addPass(mlir::createCanonicalizerPass());
}

namespace {

int64_t elementBytes(mlir::Type type) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(type).getElementType();
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

/// Per buffer, the first launch that writes it, or -1 (arguments, constants).
std::vector<int> firstWriters(const runtime::Program &program) {
  std::vector<int> writer(program.buffers.size(), -1);
  for (size_t k = 0; k < program.launches.size(); ++k)
    for (int b : program.launches[k].outputs)
      if (writer[b] < 0)
        writer[b] = static_cast<int>(k);
  return writer;
}

/// Per buffer, the last launch that reads it, or -1.
std::vector<int> lastReaders(const runtime::Program &program) {
  std::vector<int> reader(program.buffers.size(), -1);
  for (size_t k = 0; k < program.launches.size(); ++k)
    for (int b : program.launches[k].inputs)
      reader[b] = static_cast<int>(k);
  return reader;
}

/// Note [Memory by category]
/// What holds memory at a step's peak, by what it is in training, from the
/// phase of the kernels that write and read each buffer (the frontend marks
/// the backward pass and optimizer updates, sinter::PhaseGuard): an input
/// an update reads and the forward pass reads too is a parameter; one only
/// updates read is optimizer state; the rest of the inputs are the batch. A
/// result the backward pass writes is a gradient; one an update writes is a
/// new value that could not be written in place. In the arena, a buffer the
/// forward pass writes and a later phase reads is an activation kept for
/// the backward pass; the others are temporaries, or a kernel's workspace.
enum Category {
  Parameters,
  OptimizerState,
  Batch,
  Gradients,
  NewValues,
  OtherResults,
  Activations,
  Temporaries,
  Workspace,
  Categories
};
constexpr const char *kCategoryNames[Categories] = {
    "parameters",
    "optimizer state",
    "the batch and other inputs",
    "gradients",
    "updated values not written in place",
    "other results (the loss, outputs)",
    "activations kept for the backward pass",
    "temporaries",
    "kernel workspace",
};

/// Fills program.peakCategories (Note [Memory by category]) from the
/// buffers counted at the peak (arena and results, `held` bytes each) and
/// the arguments.
void peakCategories(runtime::Program &program, const std::vector<bool> &counted,
                    const std::vector<bool> &workspace, const std::vector<int64_t> &held) {
  using Phase = runtime::Program::Launch::Phase;
  size_t n = program.buffers.size();
  // The latest phase that reads each buffer, and whether the forward pass does.
  std::vector<int> latestReader(n, -1);
  std::vector<bool> forwardReads(n, false);
  for (const runtime::Program::Launch &launch : program.launches)
    for (int b : launch.inputs) {
      latestReader[b] = std::max(latestReader[b], static_cast<int>(launch.phase));
      forwardReads[b] = forwardReads[b] || launch.phase == Phase::Forward;
    }
  std::vector<bool> isArgument(n, false), isResult(n, false);
  for (int b : program.arguments)
    isArgument[b] = true;
  for (int b : program.results)
    isResult[b] = true;
  int64_t bytes[Categories] = {};
  for (size_t b = 0; b < n; ++b) {
    int64_t size = held[b];
    auto written = static_cast<Phase>(program.buffers[b].phase);
    if (isArgument[b]) { // held in the allocator's size class, as persistent_bytes counts
      bool updated = latestReader[b] == static_cast<int>(Phase::Update);
      bytes[!updated          ? Batch
            : forwardReads[b] ? Parameters
                              : OptimizerState] += runtime::HostAllocator::size_class(size);
    } else if (!counted[b]) {
      continue;
    } else if (workspace[b]) {
      bytes[Workspace] += size;
    } else if (isResult[b]) {
      bytes[written == Phase::Backward ? Gradients
            : written == Phase::Update ? NewValues
                                       : OtherResults] += size;
    } else {
      bool kept = written == Phase::Forward && latestReader[b] > static_cast<int>(Phase::Forward);
      bytes[kept ? Activations : Temporaries] += size;
    }
  }
  program.peakCategories.clear();
  for (int c = 0; c < Categories; ++c)
    if (bytes[c] > 0)
      program.peakCategories.push_back({kCategoryNames[c], bytes[c]});
}

/// Fills program.peakUses: the arena buffers live at the launch where the
/// most arena bytes are live (results in the arena among them), and the
/// results the caller allocates for the whole run, summed by the user's
/// line of the launch that writes them.
void peakUses(runtime::Program &program, const std::vector<planner::Live> &live,
              const std::vector<int> &planned) {
  size_t n = program.buffers.size();
  std::vector<int> writer = firstWriters(program);
  std::vector<bool> workspace(n, false);
  for (const runtime::Program::Launch &launch : program.launches)
    for (size_t j = static_cast<size_t>(launch.results); j < launch.outputs.size(); ++j)
      workspace[launch.outputs[j]] = true;
  int64_t end = static_cast<int64_t>(program.launches.size()), peakAt = 0, most = -1;
  for (int64_t t = 0; t < end; ++t) {
    int64_t bytes = 0;
    for (int b : planned)
      if (live[b].first <= t && t <= live[b].last)
        bytes += live[b].bytes;
    if (bytes > most)
      most = bytes, peakAt = t;
  }
  std::vector<bool> counted(n, false);
  program.peakWorkspaceBytes = program.peakTensorBytes = 0;
  for (int b : planned) {
    counted[b] = live[b].first <= peakAt && peakAt <= live[b].last;
    if (counted[b])
      (workspace[b] ? program.peakWorkspaceBytes : program.peakTensorBytes) += live[b].bytes;
  }
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    counted[b] = counted[b] || (program.buffers[b].offset < 0 && program.donors[r] < 0);
  }
  for (int b : program.arguments)
    counted[b] = false; // the inputs, held before the step
  std::map<std::string, runtime::Program::PeakUse> byLine;
  std::map<std::string, int64_t> largest;
  // The bytes each buffer holds: a result in the arena, its size class.
  std::vector<int64_t> held(n);
  for (size_t b = 0; b < n; ++b)
    held[b] = live[b].bytes;
  for (size_t b = 0; b < n; ++b) {
    if (!counted[b] || held[b] == 0)
      continue;
    std::string label = writer[b] < 0 ? std::string("a constant or a copied result")
                                      : program.launches[writer[b]].label;
    if (workspace[b])
      label = "workspace of " + label;
    size_t arrow = label.rfind(" <- ");
    std::string line = arrow == std::string::npos ? label : label.substr(arrow + 4);
    runtime::Program::PeakUse &use = byLine[line];
    use.line = line;
    use.bytes += held[b];
    if (held[b] > largest[line]) {
      largest[line] = held[b];
      use.example = label.substr(0, arrow);
    }
  }
  program.peakUses.clear();
  for (auto &[line, use] : byLine)
    program.peakUses.push_back(std::move(use));
  std::stable_sort(program.peakUses.begin(), program.peakUses.end(),
                   [](const auto &a, const auto &b) { return a.bytes > b.bytes; });
  peakCategories(program, counted, workspace, held);
}

/// Gives every buffer the caller does not provide a place in one arena (see
/// Note [Planning memory]): arguments and donated results are the caller's;
/// the rest live from the launch that writes them (constants: from their
/// first reader) to their last reader, and results to the end (Note
/// [Results in the arena] in sinter/runtime/Program.h; the first return of
/// a value a kernel writes is handed out, later ones and the others are
/// copied out at the end).
bool planMemory(runtime::Program &program, const std::vector<int> &into, std::string &report,
                std::string &error) {
  size_t n = program.buffers.size();
  int64_t end = static_cast<int64_t>(program.launches.size());
  std::vector<bool> external(n, false), written(n, false);
  for (int b : program.arguments)
    external[b] = true;
  for (const runtime::Program::Launch &launch : program.launches)
    for (int b : launch.outputs)
      written[b] = true;
  std::vector<bool> copied(n, false), handedOut(n, false);
  program.inArena.assign(program.results.size(), false);
  for (size_t r = 0; r < program.results.size(); ++r) {
    int b = program.results[r];
    bool first = written[b] && !external[b] && !handedOut[b];
    if (first && (program.donors[r] >= 0 || program.buffers[b].bytes == 0)) {
      external[b] = true; // written into the caller's memory
    } else if (first) {
      handedOut[b] = true;
      program.inArena[r] = true;
    } else if (!external[b] || !written[b]) {
      copied[b] = true;
    }
  }
  std::vector<planner::Live> live(n, {0, end, -1});
  for (size_t b = 0; b < n; ++b)
    live[b].bytes = handedOut[b] ? runtime::HostAllocator::size_class(program.buffers[b].bytes)
                                 : program.buffers[b].bytes;
  for (const runtime::Program::Fill &fill : program.fills)
    live[fill.buffer].first = fill.launch;
  for (int64_t k = 0; k < end; ++k) {
    const runtime::Program::Launch &launch = program.launches[k];
    for (int b : launch.outputs)
      live[b].first = std::min(live[b].first, k), live[b].last = std::max(live[b].last, k);
    for (int b : launch.inputs)
      live[b].last = std::max(live[b].last, k);
  }
  // A buffer written in place over another (Note [In-place kernels]) is
  // part of that one's life; `root` follows the chain.
  auto root = [&](int b) {
    while (into[b] >= 0)
      b = into[b];
    return b;
  };
  for (size_t b = 0; b < n; ++b)
    if (into[b] >= 0) {
      int r = root(static_cast<int>(b));
      live[r].last = std::max({live[r].last, live[b].last, live[b].first});
    }
  std::vector<planner::Live> planned;
  std::vector<int> which;
  for (size_t b = 0; b < n; ++b) {
    if (external[b] || into[b] >= 0)
      continue;
    if (copied[b] || handedOut[b])
      live[b].last = end;
    if (live[b].last < live[b].first) // never read: live while written
      live[b].last = live[b].first;
    planned.push_back(live[b]);
    which.push_back(static_cast<int>(b));
  }
  planner::Plan plan = planner::planSmallest(planned);
  if (std::string wrong = planner::verifyPlan(planned, plan); !wrong.empty()) {
    error = "the memory plan is wrong: " + wrong;
    return false;
  }
  for (size_t i = 0; i < which.size(); ++i)
    program.buffers[which[i]].offset = plan.offsets[i];
  for (size_t b = 0; b < n; ++b)
    if (into[b] >= 0)
      program.buffers[b].offset = program.buffers[root(static_cast<int>(b))].offset;
  program.arenaBytes = plan.size;
  peakUses(program, live, which);
  // The report: the arena, then its buffers by size.
  std::vector<size_t> bySize(which.size());
  for (size_t i = 0; i < bySize.size(); ++i)
    bySize[i] = i;
  std::stable_sort(bySize.begin(), bySize.end(),
                   [&](size_t a, size_t b) { return planned[a].bytes > planned[b].bytes; });
  std::vector<int> writer = firstWriters(program);
  llvm::raw_string_ostream os(report);
  os << "arena: " << plan.size << " bytes for " << which.size() << " buffers over "
     << program.launches.size() << " launches (packed in order of "
     << planner::packingOrderName(plan.order) << ")\n"
     << "buffer      bytes     offset  first   last  written by\n";
  for (size_t i : bySize) {
    int w = writer[which[i]];
    os << llvm::format(
              "%6d %10lld %10lld %6lld %6lld  ", which[i], static_cast<long long>(planned[i].bytes),
              static_cast<long long>(plan.offsets[i]), static_cast<long long>(planned[i].first),
              static_cast<long long>(planned[i].last))
       << (w < 0 ? std::string("a constant") : program.launches[w].label) << "\n";
  }
  return true;
}

/// The user's line an op came from ("model.cpp:40"), or "".
std::string userLine(mlir::Location loc) {
  std::string line;
  loc->walk([&](mlir::Location inner) {
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(inner)) {
      line = (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
              llvm::Twine(file.getLine()))
                 .str();
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return line;
}

/// A launch's label in profiles (Note [Kernel profile]): the op, or a
/// fusion's first ops, its first result's shape, and the user's line.
std::string launchLabel(mlir::Operation &op) {
  std::string label;
  llvm::raw_string_ostream os(label);
  auto shortName = [](mlir::Operation &o) { return o.getName().stripDialect(); };
  if (auto fusion = mlir::dyn_cast<ir::FusionOp>(op)) {
    os << "fusion(";
    int shown = 0, count = 0;
    for (mlir::Operation &inner : fusion.getBody().front().without_terminator()) {
      if (++count <= 4)
        os << (shown++ ? "," : "") << shortName(inner);
    }
    if (count > 4)
      os << ",+" << count - 4;
    os << ")";
  } else {
    os << shortName(op);
  }
  if (op.getNumResults() > 0)
    if (auto type = mlir::dyn_cast<mlir::ShapedType>(op.getResult(0).getType())) {
      os << " " << type.getElementType() << "[";
      llvm::interleave(type.getShape(), os, "x");
      os << "]";
    }
  std::string line = userLine(op.getLoc());
  if (!line.empty())
    os << " <- " << line;
  return label;
}

/// The latest training phase among an op's locations (Note [Memory by
/// category]): the lowering names the backward pass's and updates' lines.
runtime::Program::Launch::Phase phaseOf(mlir::Operation &op) {
  using Phase = runtime::Program::Launch::Phase;
  Phase phase = Phase::Forward;
  op.getLoc()->walk([&](mlir::Location inner) {
    if (auto name = mlir::dyn_cast<mlir::NameLoc>(inner)) {
      if (name.getName() == "update")
        phase = Phase::Update;
      else if (name.getName() == "backward" && phase == Phase::Forward)
        phase = Phase::Backward;
    }
    return mlir::WalkResult::advance();
  });
  return phase;
}

/// Note [Donation]
/// A step's input that nothing outside the step holds (a parameter, or an
/// optimizer's moment, whose new value the step computes: the frontend says
/// which) dies with the step, so a result of the same size may be written
/// into its memory, as XLA's donated buffers and PyTorch's in-place
/// optimizers do: the step then allocates nothing for those results. It is
/// safe when every launch that reads the input runs before the one that
/// writes the result, or is that launch itself and reads the input only at
/// the index it writes: a fusion that computes all its results in one loop
/// and reaches the result from that input only through elementwise ops (or
/// reshapes, which keep the index) or reductions, which read before the
/// kernel writes. (An input another result of the same loop overwrote would
/// be read too late, hence "reaches the result": the AdamW updates of
/// several small same-sized parameters share a kernel.) The kernel reads
/// every result's value at an index before it writes any there (Note [Reads
/// before writes] in compiler/lib/Codegen/CpuKernel.cpp), so a result read
/// later in the loop still sees the input. Any donatable input of the
/// result's size will do, not only the one it replaces; results are paired
/// in the order their kernels run.

/// The byte offset a launch reads its input `j` at (a slice view).
int64_t offsetOf(const runtime::Program::Launch &launch, size_t j) {
  return launch.inputOffsets.empty() ? 0 : launch.inputOffsets[j];
}

/// Whether fusion `fusion` may write its result `result` over its operand
/// `operand`: one loop computes all its results (they have one size), or it
/// is a row kernel (codegen::rendersRowByRow: a row's reads come before its
/// writes), and the operand reaches that result and every other, only
/// through ops that keep the index (or reductions, computed before the
/// writes).
bool writableInPlace(ir::FusionOp fusion, unsigned operand, unsigned result) {
  auto yield = mlir::cast<ir::YieldOp>(fusion.getBody().front().getTerminator());
  auto elements = [](mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getNumElements();
  };
  bool oneSize = llvm::all_of(yield.getValues(), [&](mlir::Value v) {
    return elements(v) == elements(yield.getOperand(0));
  });
  if (!oneSize && !codegen::rendersRowByRow(fusion))
    return false; // results of several sizes, and not a row kernel: a loop per result
  llvm::SmallVector<mlir::Value> work = {fusion.getBody().front().getArgument(operand)};
  llvm::DenseSet<mlir::Operation *> seen;
  bool reachesResult = false;
  while (!work.empty()) {
    mlir::Value value = work.pop_back_val();
    for (mlir::OpOperand &use : value.getUses()) {
      mlir::Operation *user = use.getOwner();
      if (mlir::isa<ir::YieldOp>(user)) {
        reachesResult = reachesResult || use.getOperandNumber() == result;
        continue;
      }
      if (!seen.insert(user).second || mlir::isa<ir::ReduceSumOp, ir::ReduceMaxOp>(user))
        continue;
      bool keepsIndex = mlir::isa<ir::ReshapeOp>(user) ||
                        sinter::fusion::roleOf(user) == sinter::fusion::Role::Elementwise;
      if (!keepsIndex)
        return false;
      for (mlir::Value next : user->getResults())
        work.push_back(next);
    }
  }
  return reachesResult;
}

/// Note [In-place kernels]
/// A fusion may write a result over one of its inputs that dies with it (its
/// last reader; an intermediate of the step, of the result's size) when it
/// reads that input only at the index it writes (as for donation:
/// writableInPlace). The two then share one buffer, and the bytes live at
/// that kernel drop by the input's size: an activation written over the
/// matmul output it is computed from, one stage of a gradient over the last.

/// Per buffer, the input buffer whose memory it is written into, or -1.
std::vector<int> reuseInPlace(const runtime::Program &program,
                              const std::vector<mlir::Operation *> &ops,
                              llvm::raw_ostream &report) {
  size_t n = program.buffers.size();
  std::vector<int> into(n, -1), lastReader = lastReaders(program);
  std::vector<bool> callers(n, false), taken(n, false);
  for (int b : program.arguments)
    callers[b] = true;
  for (int b : program.results)
    callers[b] = true; // the caller's memory, or copied out at the end
  for (const runtime::Program::Fill &fill : program.fills)
    taken[fill.buffer] = true; // filled each run: not a kernel's to reuse
  for (size_t k = 0; k < program.launches.size(); ++k) {
    auto fusion = mlir::dyn_cast<ir::FusionOp>(ops[k]);
    if (!fusion)
      continue;
    const runtime::Program::Launch &launch = program.launches[k];
    for (int r = 0; r < launch.results; ++r) {
      int out = launch.outputs[r];
      if (callers[out] || into[out] >= 0)
        continue;
      for (size_t i = 0; i < launch.inputs.size() && into[out] < 0; ++i) {
        int in = launch.inputs[i];
        if (callers[in] || taken[in] || lastReader[in] != static_cast<int>(k) ||
            program.buffers[in].bytes != program.buffers[out].bytes ||
            std::count(launch.outputs.begin(), launch.outputs.end(), in) > 0)
          continue;
        bool safe = true;
        for (size_t j = 0; j < launch.inputs.size() && safe; ++j)
          if (launch.inputs[j] == in)
            safe = offsetOf(launch, j) == 0 &&
                   writableInPlace(fusion, static_cast<unsigned>(j), static_cast<unsigned>(r));
        if (!safe)
          continue;
        into[out] = in;
        taken[in] = true;
        report << "buffer " << out << " is written over buffer " << in << " ("
               << program.buffers[in].bytes << " bytes, in place)\n";
      }
    }
  }
  return into;
}

/// Pairs results with donatable arguments of the same size (Note
/// [Donation]); `ops` is each launch's op.
void donate(runtime::Program &program, const std::vector<mlir::Operation *> &ops,
            const std::vector<bool> &donatable, llvm::raw_ostream &report) {
  size_t n = program.buffers.size();
  std::vector<int> writer = firstWriters(program), lastReader = lastReaders(program);
  std::vector<bool> isArgument(n, false), taken(program.arguments.size(), false);
  for (int b : program.arguments)
    isArgument[b] = true;
  // An argument the step also returns is copied out after the run: its
  // memory must still hold it then.
  for (size_t a = 0; a < program.arguments.size(); ++a)
    taken[a] = std::find(program.results.begin(), program.results.end(), program.arguments[a]) !=
               program.results.end();
  program.donors.assign(program.results.size(), -1);
  std::vector<bool> returned(n, false);
  // Results in the order they are written: an argument free by one result's
  // writer is free for every later one, so pairing the earliest first never
  // takes an argument from a result that alone could use it (taking them in
  // return order left an update written early, before its own argument's
  // peers were dead, with nothing to write into).
  std::vector<size_t> byWriter(program.results.size());
  std::iota(byWriter.begin(), byWriter.end(), size_t{0});
  std::stable_sort(byWriter.begin(), byWriter.end(), [&](size_t x, size_t y) {
    return writer[program.results[x]] < writer[program.results[y]];
  });
  for (size_t r : byWriter) {
    int buffer = program.results[r];
    int w = writer[buffer];
    bool again = returned[buffer];
    returned[buffer] = true;
    if (isArgument[buffer] || w < 0 || again)
      continue; // returned as is, or a second time (a copy)
    auto fusion = mlir::dyn_cast<ir::FusionOp>(ops[w]);
    int chosen = -1;
    for (size_t a = 0; a < program.arguments.size() && chosen < 0; ++a) {
      int input = program.arguments[a];
      if (a >= donatable.size() || !donatable[a] || taken[a] ||
          program.buffers[input].bytes != program.buffers[buffer].bytes || lastReader[input] > w)
        continue;
      bool safe = true;
      if (lastReader[input] == w) {
        const std::vector<int> &inputs = program.launches[w].inputs;
        const std::vector<int> &outputs = program.launches[w].outputs;
        unsigned own = static_cast<unsigned>(std::find(outputs.begin(), outputs.end(), buffer) -
                                             outputs.begin());
        for (size_t k = 0; k < inputs.size() && safe; ++k)
          if (inputs[k] == input)
            safe = fusion && offsetOf(program.launches[w], k) == 0 &&
                   writableInPlace(fusion, static_cast<unsigned>(k), own);
      }
      if (safe)
        chosen = static_cast<int>(a);
    }
    if (chosen < 0)
      continue;
    taken[chosen] = true;
    program.donors[r] = chosen;
    report << "result " << r << " is written into argument " << chosen << " ("
           << program.buffers[buffer].bytes << " bytes, donated)\n";
  }
}

/// The function as launches over buffers, in the kernels' order (the order
/// codegen::renderCpuKernels numbers them), its results paired with donated
/// arguments and its buffers planned. Kernels are numbered across the
/// module; `kernel` is the number of the function's first kernel and is
/// advanced past its last.
bool translate(mlir::func::FuncOp function, runtime::Program &program, int &kernel,
               const std::vector<std::vector<int64_t>> &scratch, const std::vector<bool> *donatable,
               std::string &planReport, std::string &error) {
  llvm::DenseMap<mlir::Value, int> buffers;
  llvm::DenseMap<mlir::Value, int64_t> offsets; // of views at an offset, in bytes
  auto bufferOf = [&](mlir::Value value) {
    auto [it, inserted] = buffers.try_emplace(value, static_cast<int>(program.buffers.size()));
    if (inserted) {
      auto type = mlir::cast<mlir::ShapedType>(value.getType());
      program.buffers.push_back({type.getNumElements() * elementBytes(type)});
    }
    return it->second;
  };
  std::vector<mlir::Operation *> launchOps;
  if (auto traded = function->getAttrOfType<mlir::DenseI64ArrayAttr>("sinter.rematerialized");
      traded && traded.size() == 2) {
    program.recomputedValues = traded[0];
    program.recomputeOperations = traded[1];
  }
  for (mlir::BlockArgument arg : function.getArguments())
    program.arguments.push_back(bufferOf(arg));
  for (mlir::Operation &op : function.getBody().front()) {
    if (auto constant = mlir::dyn_cast<ir::ConstantOp>(op)) {
      auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat()) {
        error = "only splat constants can be compiled yet";
        return false;
      }
      runtime::Program::Fill fill;
      fill.buffer = bufferOf(constant.getResult());
      llvm::ArrayRef<char> raw = dense.getRawData();
      int64_t bytes = elementBytes(dense.getType());
      fill.element.assign(raw.begin(), raw.begin() + std::min<int64_t>(bytes, raw.size()));
      if (dense.getElementType().isInteger(1)) // i1 splats are stored as bits
        fill.element = {static_cast<uint8_t>(dense.getSplatValue<bool>() ? 1 : 0)};
      program.fills.push_back(std::move(fill));
      continue;
    }
    if (auto reshape = mlir::dyn_cast<ir::ReshapeOp>(op)) {
      // A view: the same bytes in another shape (row-major either way).
      int base = bufferOf(reshape.getOperand());
      buffers[reshape.getResult()] = base;
      offsets[reshape.getResult()] = offsets.lookup(reshape.getOperand());
      continue;
    }
    if (auto slice = mlir::dyn_cast<ir::SliceOp>(op)) {
      // A view at an offset: a contiguous slice (SliceFusionResultsOutside).
      int64_t first = ir::contiguousOffset(slice);
      if (first < 0) {
        error = "a slice outside a fusion must select contiguous elements";
        return false;
      }
      int base = bufferOf(slice.getOperand());
      buffers[slice.getResult()] = base;
      offsets[slice.getResult()] =
          offsets.lookup(slice.getOperand()) + first * elementBytes(slice.getOperand().getType());
      continue;
    }
    if (mlir::isa<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : op.getOperands())
        program.results.push_back(bufferOf(v));
      continue;
    }
    if (!mlir::isa<ir::FusionOp>(op) && !codegen::isLibraryKernel(&op)) {
      error = "no kernel runs '" + op.getName().getStringRef().str() + "'";
      return false;
    }
    runtime::Program::Launch launch;
    launch.kernel = kernel++;
    launch.label = launchLabel(op);
    launch.phase = phaseOf(op);
    launchOps.push_back(&op);
    for (mlir::Value v : op.getOperands()) {
      launch.inputs.push_back(bufferOf(v));
      launch.inputOffsets.push_back(offsets.lookup(v));
    }
    if (llvm::all_of(launch.inputOffsets, [](int64_t o) { return o == 0; }))
      launch.inputOffsets.clear();
    auto fusion = mlir::dyn_cast<ir::FusionOp>(op);
    for (mlir::Value v : op.getResults()) {
      int b = bufferOf(v);
      launch.outputs.push_back(b);
      // The phase of the op inside a fusion that computes this result.
      mlir::Operation *computes = &op;
      if (fusion)
        if (mlir::Operation *def = fusion.getBody()
                                       .front()
                                       .getTerminator()
                                       ->getOperand(mlir::cast<mlir::OpResult>(v).getResultNumber())
                                       .getDefiningOp())
          computes = def;
      program.buffers[b].phase = static_cast<uint8_t>(phaseOf(*computes));
    }
    launch.results = static_cast<int>(launch.outputs.size());
    for (int64_t bytes : scratch[launch.kernel]) {
      launch.outputs.push_back(static_cast<int>(program.buffers.size()));
      program.buffers.push_back({bytes});
    }
    program.launches.push_back(std::move(launch));
  }
  // Each constant is filled just before its first reader.
  std::vector<int> firstReader(program.buffers.size(), static_cast<int>(program.launches.size()));
  for (size_t k = program.launches.size(); k-- > 0;)
    for (int b : program.launches[k].inputs)
      firstReader[b] = static_cast<int>(k);
  for (runtime::Program::Fill &fill : program.fills)
    fill.launch = firstReader[fill.buffer];
  std::string donations;
  llvm::raw_string_ostream report(donations);
  if (donatable != nullptr)
    donate(program, launchOps, *donatable, report);
  else
    program.donors.assign(program.results.size(), -1);
  std::vector<int> into = reuseInPlace(program, launchOps, report);
  if (!planMemory(program, into, planReport, error))
    return false;
  planReport += donations;
  return true;
}

/// A value the function returns gets a buffer of its own size: a returned
/// view that involves a slice (a view at an offset in a larger buffer) is
/// computed by a fusion that copies it instead.
void materializeReturnedSlices(mlir::ModuleOp module) {
  for (mlir::func::FuncOp function : module.getOps<mlir::func::FuncOp>()) {
    mlir::Operation *ret = function.getBody().front().getTerminator();
    for (mlir::OpOperand &operand : ret->getOpOperands()) {
      // The chain of views from the returned value down to a computed one.
      llvm::SmallVector<mlir::Operation *> chain;
      mlir::Value base = operand.get();
      bool sliced = false;
      while (mlir::Operation *def = base.getDefiningOp()) {
        if (!mlir::isa<ir::ReshapeOp, ir::SliceOp>(def))
          break;
        sliced = sliced || mlir::isa<ir::SliceOp>(def);
        chain.push_back(def);
        base = def->getOperand(0);
      }
      if (!sliced)
        continue;
      mlir::OpBuilder builder(ret);
      auto fusion = builder.create<ir::FusionOp>(ret->getLoc(), operand.get().getType(),
                                                 mlir::ValueRange{base});
      mlir::Block *body =
          builder.createBlock(&fusion.getBody(), {}, {base.getType()}, {base.getLoc()});
      mlir::IRMapping map;
      map.map(base, body->getArgument(0));
      for (mlir::Operation *view : llvm::reverse(chain))
        builder.clone(*view, map);
      builder.create<ir::YieldOp>(ret->getLoc(), map.lookup(operand.get()));
      operand.set(fusion.getResult(0));
    }
  }
}

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

} // namespace

namespace {

bool lowerAndPlan(const std::vector<std::vector<lazy::NodePtr>> &graphs,
                  std::vector<runtime::Program> &programs, CpuStep &step, std::string &error,
                  const DebugOptions &debug, bool buildKernels,
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
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::string name = graphs.size() == 1 ? "step" : "op" + std::to_string(i);
    mlir::OwningOpRef<mlir::ModuleOp> one = lowerLazyGraph(context, graphs[i], name);
    if (!one)
      return false;
    for (mlir::func::FuncOp function :
         llvm::make_early_inc_range(one->getOps<mlir::func::FuncOp>())) {
      function->remove();
      module->getBody()->push_back(function);
    }
  }
  step.times.lower = secondsSince(start);

  // Note [Fitting a memory budget]: the budget covers the arena, with the
  // results in it (Note [Results in the arena]), and the results the caller
  // allocates (copies, rare); the rematerialization pass trades within it,
  // estimated by the bytes live at once. Packing can need a little more
  // than that, so when the planned step is still over the budget, the
  // pipeline runs again from the lowered module with the arena's share
  // lowered by the excess (at most kBudgetAttempts times).
  constexpr int kBudgetAttempts = 5;
  bool budgeted = memoryBudget > 0 && graphs.size() == 1;
  int64_t arenaBudget = budgeted ? memoryBudget : 0;
  mlir::OwningOpRef<mlir::ModuleOp> lowered;
  if (budgeted)
    lowered = module->clone();
  std::string source;
  std::vector<std::string> planReports;
  for (int attempt = 0;; ++attempt) {
    start = Clock::now();
    std::string passLog;
    llvm::raw_string_ostream passes(passLog);
    mlir::PassManager pm(&context);
    if (debug.level >= 4) {
      context.disableMultithreading();
      pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                          [](mlir::Pass *, mlir::Operation *) { return true; },
                          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
                          /*printAfterOnlyOnFailure=*/false, passes);
    }
    fusionReport.clear();
    buildPipeline(pm, {.explain = debug.level >= 2,
                       .memoryBudget = budgeted ? std::max<int64_t>(1, arenaBudget) : 0});
    bool passed = mlir::succeeded(pm.run(*module));
    materializeReturnedSlices(*module);
    step.times.passes += secondsSince(start);
    if (debug.level >= 4)
      dump(debug, ".passes.mlir", passLog);
    if (debug.level >= 2)
      dump(debug, ".fusion.txt", fusionReport);
    if (!passed)
      return false;

    start = Clock::now();
    std::vector<std::vector<int64_t>> scratch;
    mlir::FailureOr<std::string> rendered =
        codegen::renderCpuKernels(module->getOperation(), "sinter_kernel_", step.kernels, &scratch);
    step.times.codegen += secondsSince(start);
    if (mlir::failed(rendered))
      return false;
    source = std::move(*rendered);

    programs.clear();
    planReports.clear();
    int kernel = 0;
    for (mlir::func::FuncOp function : module->getOps<mlir::func::FuncOp>()) {
      runtime::Program &program = programs.emplace_back();
      program.kernelPrefix = "sinter_kernel_";
      std::string translateError;
      std::string &planReport = planReports.emplace_back();
      const std::vector<bool> *donatableHere =
          donatable != nullptr && programs.size() <= donatable->size()
              ? &(*donatable)[programs.size() - 1]
              : nullptr;
      if (!translate(function, program, kernel, scratch, donatableHere, planReport,
                     translateError)) {
        diagnostics << translateError << "\n";
        return false;
      }
    }
    if (!budgeted || attempt + 1 == kBudgetAttempts)
      break;
    runtime::Allocation allocation = runtime::allocationOf(programs.front());
    int64_t planned = allocation.arena + allocation.results;
    if (planned <= memoryBudget)
      break;
    // Packing may need more than the bytes live at once, and trades come in
    // whole values, so a small excess may need a larger cut: at least a
    // sixteenth.
    arenaBudget -= std::max(planned - memoryBudget, arenaBudget / 16);
    module = lowered->clone();
  }

  llvm::raw_string_ostream ir(step.ir);
  module->print(ir);
  if (debug.level >= 2)
    dump(debug, ".mlir", step.ir);
  if (debug.level >= 3)
    dump(debug, ".kernels.cpp", source);
  if (debug.level >= 2) {
    size_t f = 0;
    for (mlir::func::FuncOp function : module->getOps<mlir::func::FuncOp>())
      dump(debug, (llvm::Twine(".") + function.getSymName() + ".plan.txt").str(), planReports[f++]);
  }

  start = Clock::now();
  codegen::CompiledLibrary library;
  std::string compileError;
  if (buildKernels && !codegen::compileHostLibrary(source, library, compileError)) {
    diagnostics << compileError;
    return false;
  }
  step.library = library.path;
  step.cacheHit = library.cacheHit;
  for (runtime::Program &program : programs)
    program.library = library.path;
  step.times.build = secondsSince(start);
  return true;
}

} // namespace

bool compileGraphsForCpu(const std::vector<std::vector<lazy::NodePtr>> &graphs,
                         std::vector<runtime::Program> &programs, CpuStep &step, std::string &error,
                         const DebugOptions &debug, const std::vector<std::vector<bool>> *donatable,
                         int64_t memoryBudget) {
  return lowerAndPlan(graphs, programs, step, error, debug, /*buildKernels=*/true, donatable,
                      memoryBudget);
}

bool planStepForCpu(const std::vector<lazy::NodePtr> &outputs, runtime::Program &program,
                    CpuStep &step, std::string &error, const std::vector<bool> *donatable,
                    int64_t memoryBudget) {
  std::vector<runtime::Program> programs;
  std::vector<std::vector<bool>> perGraph;
  if (donatable != nullptr)
    perGraph.push_back(*donatable);
  if (!lowerAndPlan({outputs}, programs, step, error, {}, /*buildKernels=*/false,
                    donatable != nullptr ? &perGraph : nullptr, memoryBudget))
    return false;
  program = std::move(programs.front());
  return true;
}

bool compileStepForCpu(const std::vector<lazy::NodePtr> &outputs, CpuStep &step, std::string &error,
                       const DebugOptions &debug) {
  std::vector<runtime::Program> programs;
  if (!compileGraphsForCpu({outputs}, programs, step, error, debug))
    return false;
  step.program = std::move(programs.front());
  return true;
}

} // namespace sinter::compiler
