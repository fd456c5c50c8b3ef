//===- Dataflow.cpp - a function's kernels over values --------------------===//
#include "Dataflow.h"

#include "sinter/Passes/Buckets.h"
#include "sinter/Passes/Passes.h"
#include "sinter/Passes/Phases.h"

#include <algorithm>
#include <numeric>

namespace sinter::passes {

int64_t bytesOf(mlir::Value value) {
  auto type = mlir::cast<mlir::ShapedType>(value.getType());
  mlir::Type element = type.getElementType();
  int64_t width = element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  return type.getNumElements() * width;
}

const KernelMemory &KernelFacts::of(mlir::Operation *kernel) {
  auto [it, inserted] = known_.try_emplace(kernel);
  if (inserted && rules_.kernel)
    it->second = rules_.kernel(kernel);
  return it->second;
}

namespace {

int64_t elementBytes(mlir::Value value) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(value.getType()).getElementType();
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

/// Note [What the IR's dataflow does not know], (4): the all-reduces of
/// `result` grouped into gradient buckets as translation groups them, by the
/// same function on the same launches (planner::bucketCollectives, Note
/// [Gradient buckets]): each bucket's start reads its tensors and writes the
/// bucket's buffer, which lives until its done writes the reduced tensors.
/// A start or done stands for its first all-reduce's op in result.kernels.
void bucketAllReduces(FunctionFlow &result) {
  planner::Dataflow &flow = result.flow;
  using Step = runtime::Program::Step;
  std::vector<Step> launches(flow.kernels.size());
  std::vector<runtime::Program::Buffer> buffers(flow.bytes.size());
  for (size_t v = 0; v < flow.bytes.size(); ++v)
    buffers[v].bytes = flow.bytes[v];
  // The op each start (by its first input) and done (by its first output)
  // stands for.
  llvm::DenseMap<int, mlir::Operation *> byInput, byOutput;
  bool any = false;
  for (size_t k = 0; k < flow.kernels.size(); ++k) {
    Step &step = launches[k];
    step.inputs = flow.kernels[k].reads;
    step.outputs = flow.kernels[k].writes;
    mlir::Operation *op = result.kernels[k];
    StatusOr<Step> made = mlir::isa<ir::AllReduceOp>(op) ? collectiveStepOf(*op)
                                                         : StatusOr<Step>(absl::NotFoundError(""));
    if (made.ok()) { // an element type translation refuses stands alone
      any = true;
      step.kind = made->kind;
      step.reduce = made->reduce;
      step.elementType = made->elementType;
      step.phase = made->phase;
      for (int v : step.inputs)
        byInput.try_emplace(v, op);
      for (int v : step.outputs)
        byOutput.try_emplace(v, op);
    } else if (flow.kernels[k].collective) {
      step.kind = Step::Kind::ReduceScatter; // stands where it is
    }
  }
  if (!any)
    return;
  std::vector<int> origin =
      planner::bucketCollectives(launches, buffers, planner::bucketOptionsFromEnvironment());
  std::vector<planner::Dataflow::Kernel> kernels;
  llvm::SmallVector<mlir::Operation *> ops;
  for (size_t k = 0; k < launches.size(); ++k) {
    if (origin[k] >= 0) {
      kernels.push_back(std::move(flow.kernels[origin[k]]));
      ops.push_back(result.kernels[origin[k]]);
      continue;
    }
    const Step &step = launches[k];
    planner::Dataflow::Kernel &kernel = kernels.emplace_back();
    kernel.reads = step.inputs;
    kernel.writes = step.outputs;
    kernel.results = step.results;
    kernel.collective = true;
    ops.push_back(step.kind == Step::Kind::AllReduce ? byInput.lookup(step.inputs.front())
                                                     : byOutput.lookup(step.outputs.front()));
  }
  for (size_t v = flow.bytes.size(); v < buffers.size(); ++v) {
    flow.bytes.push_back(buffers[v].bytes);
    flow.argument.push_back(false);
    flow.returned.push_back(false);
    flow.donated.push_back(false);
  }
  flow.kernels = std::move(kernels);
  result.kernels = std::move(ops);
}

} // namespace

FunctionFlow dataflowOf(mlir::func::FuncOp function, KernelFacts *facts) {
  FunctionFlow result;
  planner::Dataflow &flow = result.flow;
  llvm::DenseMap<mlir::Value, int64_t> offsets; // of views at an offset, in bytes
  std::vector<int> results;                     // the values returned, in order
  if (facts) {
    flow.allocationSize = facts->rules().allocationSize;
    flow.alignment = facts->rules().alignment;
    flow.resultsInArena = facts->rules().resultsInArena;
  }
  auto add = [&](mlir::Value value, bool argument) {
    int id = static_cast<int>(flow.bytes.size());
    flow.bytes.push_back(value.use_empty() ? 0 : bytesOf(value));
    flow.argument.push_back(argument);
    flow.returned.push_back(false);
    flow.donated.push_back(false);
    result.valueOf[value] = id;
    return id;
  };
  for (mlir::BlockArgument arg : function.getArguments())
    add(arg, /*argument=*/true);
  for (mlir::Operation &op : function.getBody().front()) {
    if (isView(&op)) {
      result.valueOf[op.getResult(0)] = result.valueOf.lookup(op.getOperand(0));
      int64_t offset = offsets.lookup(op.getOperand(0));
      if (auto slice = mlir::dyn_cast<ir::SliceOp>(op))
        offset +=
            std::max<int64_t>(0, ir::contiguousOffset(slice)) * elementBytes(slice.getOperand());
      if (offset != 0)
        offsets[op.getResult(0)] = offset;
      continue;
    }
    if (mlir::isa<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : op.getOperands()) {
        results.push_back(result.valueOf.lookup(v));
        flow.returned[results.back()] = true;
      }
      continue;
    }
    if (mlir::isa<ir::ConstantOp>(op)) {
      add(op.getResult(0), /*argument=*/false);
      continue;
    }
    planner::Dataflow::Kernel kernel;
    for (mlir::Value v : op.getOperands()) {
      kernel.reads.push_back(result.valueOf.lookup(v));
      kernel.readOffsets.push_back(offsets.lookup(v));
    }
    if (llvm::all_of(kernel.readOffsets, [](int64_t o) { return o == 0; }))
      kernel.readOffsets.clear();
    for (mlir::Value v : op.getResults())
      kernel.writes.push_back(add(v, /*argument=*/false));
    kernel.results = static_cast<int>(op.getNumResults());
    kernel.collective = mlir::isa<ir::AllReduceOp, ir::ReduceScatterOp, ir::AllGatherOp>(op);
    if (facts) {
      const KernelMemory &memory = facts->of(&op);
      kernel.inPlace = memory.inPlace;
      for (int64_t bytes : memory.scratch) {
        kernel.writes.push_back(static_cast<int>(flow.bytes.size()));
        flow.bytes.push_back(bytes);
        flow.argument.push_back(false);
        flow.returned.push_back(false);
        flow.donated.push_back(false);
      }
    }
    flow.kernels.push_back(std::move(kernel));
    result.kernels.push_back(&op);
  }
  if (facts)
    bucketAllReduces(result);
  // An update may be written into the memory of the argument it replaces
  // (Note [Donation]): a kernel that reads an argument and writes a result
  // of its size runs after every other reader of that argument.
  std::vector<std::vector<int>> readersOf(flow.bytes.size());
  for (size_t k = 0; k < flow.kernels.size(); ++k)
    for (int v : flow.kernels[k].reads)
      if (flow.argument[v] && (readersOf[v].empty() || readersOf[v].back() != static_cast<int>(k)))
        readersOf[v].push_back(static_cast<int>(k));
  // Each argument takes at most one result; the others are counted in the
  // arena. With the target's facts, as buffer assignment pairs them
  // (donorsOf); else the result of an update's own kernel.
  std::vector<bool> taken(flow.bytes.size(), false);
  for (size_t k = 0; k < flow.kernels.size(); ++k) {
    planner::Dataflow::Kernel &kernel = flow.kernels[k];
    for (int a : kernel.reads) {
      if (!flow.argument[a])
        continue;
      bool updates = false;
      for (int w : kernel.writes)
        if (flow.returned[w] && flow.bytes[w] == flow.bytes[a]) {
          updates = true;
          if (!facts && !taken[a] && !flow.donated[w])
            flow.donated[w] = taken[a] = true;
        }
      if (updates)
        for (int reader : readersOf[a])
          if (reader != static_cast<int>(k))
            kernel.after.push_back(reader);
    }
  }
  if (facts) {
    std::vector<int> arguments(function.getNumArguments());
    std::iota(arguments.begin(), arguments.end(), 0);
    auto flags = function->getAttrOfType<mlir::DenseBoolArrayAttr>(kDonatableAttr);
    std::vector<bool> may;
    if (flags)
      may.assign(flags.asArrayRef().begin(), flags.asArrayRef().end());
    std::vector<int> donors = planner::donorsOf(flow, arguments, results, flags ? &may : nullptr);
    for (size_t r = 0; r < results.size(); ++r)
      if (donors[r] >= 0)
        flow.donated[results[r]] = true;
  }
  return result;
}

} // namespace sinter::passes
