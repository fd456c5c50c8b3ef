//===- ProgramTranslation.cpp - a planned module as runtime Programs ------===//
#include "sinter/Compiler/ProgramTranslation.h"

#include "sinter/Passes/Buckets.h"
#include "sinter/Passes/BufferAssignment.h"
#include "sinter/Passes/Phases.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

namespace sinter::compiler {

namespace {

int64_t elementBytes(mlir::Type type) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(type).getElementType();
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

using passes::dtypeName;
using passes::phaseOf;

/// Every user line in `loc`, distinct, in order ("model.cpp:40"); the first
/// only with `first`.
std::vector<std::string> userLinesOf(mlir::Location loc, bool first) {
  std::vector<std::string> lines;
  loc->walk([&](mlir::Location inner) {
    auto file = mlir::dyn_cast<mlir::FileLineColLoc>(inner);
    if (!file)
      return mlir::WalkResult::advance();
    std::string line = (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
                        llvm::Twine(file.getLine()))
                           .str();
    if (std::find(lines.begin(), lines.end(), line) == lines.end())
      lines.push_back(line);
    return first ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
  return lines;
}

} // namespace

std::string userLine(mlir::Location loc) {
  std::vector<std::string> lines = userLinesOf(loc, /*first=*/true);
  return lines.empty() ? std::string() : lines.front();
}

std::string userLines(mlir::Location loc) {
  std::string text;
  for (const std::string &line : userLinesOf(loc, /*first=*/false))
    text += (text.empty() ? "" : ", ") + line;
  return text;
}

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

namespace {

/// Whether `value` reaches a random op's key (through a fusion's body).
bool feedsRandomKey(mlir::Value value) {
  for (mlir::OpOperand &use : value.getUses()) {
    mlir::Operation *user = use.getOwner();
    if (auto random = mlir::dyn_cast<ir::RandomOp>(user); random && random.getSeed() == value)
      return true;
    if (auto fusion = mlir::dyn_cast<ir::FusionOp>(user))
      if (feedsRandomKey(fusion.getBody().front().getArgument(use.getOperandNumber())))
        return true;
  }
  return false;
}

/// Whether an op of the forward pass and one of the update read `value`
/// (the ops inside a fusion, and through views), by each op's own phase:
/// a kernel's phase is its latest op's, and a backward kernel may hold the
/// forward op that reads a parameter.
void readerPhases(mlir::Value value, bool &forward, bool &update) {
  using Phase = runtime::Program::Step::Phase;
  for (mlir::OpOperand &use : value.getUses()) {
    mlir::Operation *user = use.getOwner();
    if (auto fusion = mlir::dyn_cast<ir::FusionOp>(user)) {
      readerPhases(fusion.getBody().front().getArgument(use.getOperandNumber()), forward, update);
      continue;
    }
    if (mlir::isa<mlir::func::ReturnOp, ir::YieldOp>(user))
      continue;
    Phase phase = phaseOf(*user);
    forward = forward || phase == Phase::Forward;
    update = update || phase == Phase::Update;
    if (mlir::isa<ir::ReshapeOp, ir::SliceOp>(user))
      readerPhases(user->getResult(0), forward, update);
  }
}

/// Note [The step's signature]: names, roles, dtypes and shapes from the
/// function's types and the phases of the ops that read each argument.
void signatureOf(mlir::func::FuncOp function, runtime::Program &program) {
  using Role = runtime::Program::Role;
  auto valueOf = [](mlir::Type type, std::string name, Role role) {
    auto shaped = mlir::cast<mlir::ShapedType>(type);
    return runtime::Program::Value{
        std::move(name), role, dtypeName(type),
        std::vector<int64_t>(shaped.getShape().begin(), shaped.getShape().end())};
  };
  program.signature.arguments.clear();
  for (mlir::BlockArgument arg : function.getArguments()) {
    bool forward = false, update = false;
    readerPhases(arg, forward, update);
    Role role = !update ? Role::BatchInput : forward ? Role::Parameter : Role::OptimizerState;
    if (feedsRandomKey(arg))
      role = Role::RandomKey;
    program.signature.arguments.push_back(
        valueOf(arg.getType(), "arg" + std::to_string(arg.getArgNumber()), role));
  }
  program.signature.results.clear();
  for (mlir::Type type : function.getFunctionType().getResults())
    program.signature.results.push_back(
        valueOf(type, "result" + std::to_string(program.signature.results.size()), Role::Output));
}

} // namespace

mlir::LogicalResult translateToProgram(mlir::func::FuncOp function, const codegen::Target &target,
                                       const codegen::RenderedKernels &kernels, int &kernel,
                                       runtime::Program &program,
                                       std::vector<mlir::Operation *> &launchOps) {
  llvm::DenseMap<mlir::Value, int> buffers;
  llvm::DenseMap<mlir::Value, int64_t> offsets; // of views at an offset, in bytes
  auto bufferOf = [&](mlir::Value value) {
    auto [it, inserted] = buffers.try_emplace(value, static_cast<int>(program.buffers.size()));
    if (inserted) {
      auto type = mlir::cast<mlir::ShapedType>(value.getType());
      runtime::Program::Buffer &buffer = program.buffers.emplace_back();
      buffer.bytes = type.getNumElements() * elementBytes(type);
      mlir::Type element = type.getElementType();
      using Floats = runtime::Program::Buffer::Floats;
      buffer.floats = element.isF32()    ? Floats::F32
                      : element.isF16()  ? Floats::F16
                      : element.isBF16() ? Floats::BF16
                                         : Floats::None;
    }
    return it->second;
  };
  if (auto traded = function->getAttrOfType<mlir::DenseI64ArrayAttr>("sinter.rematerialized");
      traded && traded.size() == 2) {
    program.report.recomputedValues = traded[0];
    program.report.recomputeOperations = traded[1];
  }
  for (mlir::BlockArgument arg : function.getArguments())
    program.arguments.push_back(bufferOf(arg));
  // Fills are placed before their first reader once every launch is known.
  std::vector<runtime::Program::Step> fills;
  for (mlir::Operation &op : function.getBody().front()) {
    if (auto constant = mlir::dyn_cast<ir::ConstantOp>(op)) {
      auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat()) {
        return constant.emitError("only splat constants can be compiled yet");
      }
      runtime::Program::Step fill;
      fill.kind = runtime::Program::Step::Kind::Fill;
      fill.outputs = {bufferOf(constant.getResult())};
      llvm::ArrayRef<char> raw = dense.getRawData();
      int64_t bytes = elementBytes(dense.getType());
      fill.element.assign(raw.begin(), raw.begin() + std::min<int64_t>(bytes, raw.size()));
      if (dense.getElementType().isInteger(1)) // i1 splats are stored as bits
        fill.element = {static_cast<uint8_t>(dense.getSplatValue<bool>() ? 1 : 0)};
      fills.push_back(std::move(fill));
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
        return slice.emitError("a slice outside a fusion must select contiguous elements");
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
    if (mlir::isa<ir::AllReduceOp, ir::ReduceScatterOp, ir::AllGatherOp>(op)) {
      // A collective: no kernel; the runtime runs it through the run's
      // communicator (Note [The communicator] in sinter/runtime/Communicator.h).
      // An all-reduce's tensors go into gradient buckets (whole tensors
      // only); the sharded collectives read at their offset and are waited
      // for where they stand.
      using Kind = runtime::Program::Step::Kind;
      llvm::StringRef name = op.getName().stripDialect();
      StatusOr<runtime::Program::Step> made = passes::collectiveStepOf(op);
      if (!made.ok())
        return op.emitError() << made.status().message();
      runtime::Program::Step step = std::move(*made);
      step.label = launchLabel(op);
      step.lines = userLines(op.getLoc());
      for (mlir::Value v : op.getOperands()) {
        if (step.kind != Kind::AllReduce)
          step.inputOffsets.push_back(offsets.lookup(v));
        else if (offsets.lookup(v) != 0)
          return op.emitError() << name << " of a slice of a tensor is not supported";
        step.inputs.push_back(bufferOf(v));
      }
      for (mlir::Value v : op.getResults()) {
        int b = bufferOf(v);
        step.outputs.push_back(b);
        program.buffers[b].phase = static_cast<uint8_t>(step.phase);
      }
      step.results = static_cast<int>(step.outputs.size());
      launchOps.push_back(&op);
      program.steps.push_back(std::move(step));
      continue;
    }
    if (!mlir::isa<ir::FusionOp>(op) && !target.isLibraryCall(&op))
      return op.emitError() << "no kernel of the " << target.description().name << " target runs '"
                            << op.getName() << "'";
    runtime::Program::Step launch;
    launch.kernel = kernel++;
    launch.label = launchLabel(op);
    launch.lines = userLines(op.getLoc());
    launch.phase = phaseOf(op);
    launchOps.push_back(&op);
    for (mlir::Value v : op.getOperands()) {
      launch.inputs.push_back(bufferOf(v));
      launch.inputOffsets.push_back(offsets.lookup(v));
    }
    if (std::optional<codegen::LibraryStep> call = target.libraryStep(&op)) {
      launch.kind = runtime::Program::Step::Kind::Gemm;
      launch.gemm = call->gemm;
      launch.host = call->host;
      std::vector<int> inputs;
      std::vector<int64_t> inputOffsets;
      for (unsigned operand : call->operands) {
        inputs.push_back(launch.inputs[operand]);
        inputOffsets.push_back(launch.inputOffsets[operand]);
      }
      launch.inputs = std::move(inputs);
      launch.inputOffsets = std::move(inputOffsets);
    }
    // A kernel's launch shape, the target's (Note [Launch shapes]); none:
    // one thread. A library call has none.
    if (launch.kind == runtime::Program::Step::Kind::Kernel &&
        static_cast<size_t>(launch.kernel) < kernels.shapes.size())
      launch.shape = kernels.shapes[launch.kernel];
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
    for (int64_t bytes : kernels.scratch[launch.kernel]) {
      launch.outputs.push_back(static_cast<int>(program.buffers.size()));
      program.buffers.push_back({bytes});
    }
    program.steps.push_back(std::move(launch));
  }
  // Note [Gradient buckets]: the all-reduces as buckets of starts and dones.
  {
    std::vector<int> origin = planner::bucketCollectives(program.steps, program.buffers,
                                                         planner::bucketOptionsFromEnvironment());
    std::vector<mlir::Operation *> ops;
    for (int k : origin)
      ops.push_back(k >= 0 ? launchOps[k] : nullptr);
    launchOps = std::move(ops);
  }
  // Each constant is filled just before its first reader (after the last
  // launch when only returned), in the order the constants come.
  std::vector<runtime::Program::Step> launches = std::move(program.steps);
  std::vector<size_t> firstReader(program.buffers.size(), launches.size());
  for (size_t k = launches.size(); k-- > 0;)
    for (int b : launches[k].inputs)
      firstReader[b] = k;
  std::stable_sort(fills.begin(), fills.end(), [&](const auto &a, const auto &b) {
    return firstReader[a.outputs[0]] < firstReader[b.outputs[0]];
  });
  program.steps.clear();
  auto fill = fills.begin();
  for (size_t k = 0; k <= launches.size(); ++k) {
    for (; fill != fills.end() && firstReader[fill->outputs[0]] == k; ++fill)
      program.steps.push_back(std::move(*fill));
    if (k < launches.size())
      program.steps.push_back(std::move(launches[k]));
  }
  signatureOf(function, program);
  return mlir::success();
}

mlir::LogicalResult planFunction(mlir::func::FuncOp function, const codegen::Target &target,
                                 const codegen::RenderedKernels &kernels, int &kernel,
                                 const std::vector<bool> *donatable, runtime::Program &program,
                                 std::string &planReport) {
  std::vector<mlir::Operation *> launchOps;
  if (mlir::failed(translateToProgram(function, target, kernels, kernel, program, launchOps)))
    return mlir::failure();
  std::vector<int> kernelOf;
  for (const runtime::Program::Step *launch : runtime::launchesOf(program))
    kernelOf.push_back(launch->kernel);
  // Each fusion's plan: the one it was rendered from, or (kernels rendered
  // without their plans) made at the first question about it.
  std::vector<std::optional<codegen::KernelPlan>> made(launchOps.size());
  planner::AssignmentRules rules{
      .writesInPlace =
          [&](size_t launch, unsigned input, unsigned result) {
            auto fusion = mlir::dyn_cast_if_present<ir::FusionOp>(launchOps[launch]);
            if (!fusion)
              return false;
            size_t k = static_cast<size_t>(kernelOf[launch]);
            if (k < kernels.plans.size() && kernels.plans[k])
              return kernels.plans[k]->writesInPlace(input, result);
            if (!made[launch])
              made[launch] = target.planKernel(fusion);
            return made[launch]->writesInPlace(input, result);
          },
      .allocationSize = [&](int64_t bytes) { return target.allocationSize(bytes); },
      .alignment = target.description().alignment,
      .resultsInArena = target.description().resultsInArena,
  };
  Status assigned = planner::assignBuffers(program, donatable, rules, planReport);
  if (!assigned.ok())
    return function.emitError(std::string(assigned.message()));
  return mlir::success();
}

std::string formatProgram(const runtime::Program &program) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto list = [&](const std::vector<int> &buffers) {
    os << "(";
    llvm::interleave(
        buffers, os, [&](int b) { os << "%" << b; }, ", ");
    os << ")";
  };
  os << "arena " << program.arenaBytes << " bytes\n";
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const runtime::Program::Buffer &buffer = program.buffers[b];
    os << "buffer %" << b << ": " << buffer.bytes << " bytes, ";
    if (buffer.offset < 0)
      os << "the caller's\n";
    else
      os << "arena offset " << buffer.offset << "\n";
  }
  for (const runtime::Program::Step &step : program.steps) {
    using Kind = runtime::Program::Step::Kind;
    if (step.kind == Kind::Fill) {
      os << "fill %" << step.outputs[0] << " with";
      for (uint8_t byte : step.element)
        os << " " << llvm::format_hex_no_prefix(byte, 2);
      os << "\n";
      continue;
    }
    if (step.kind == Kind::Copy) {
      os << "copy %" << step.inputs[0] << " into result " << step.result << "\n";
      continue;
    }
    if (step.collective()) {
      constexpr const char *kNames[] = {"all_reduce ", "all_reduce_done ", "reduce_scatter ",
                                        "all_gather "};
      os << kNames[static_cast<int>(step.kind) - static_cast<int>(Kind::AllReduce)];
      if (step.kind != Kind::AllGather)
        os << runtime::reduceOpName(step.reduce) << " ";
      if (step.ranks > 0)
        os << "ranks " << step.ranks << " ";
      list(step.inputs);
      os << " -> ";
      list(step.outputs);
      os << "\n";
      continue;
    }
    if (step.kind == Kind::Gemm)
      os << "launch " << runtime::describe(step.gemm)
         << (step.host.openBlas ? " openblas" : " onednn")
         << (step.host.oneThread ? " one-thread " : " ");
    else
      os << "launch " << program.kernelPrefix << step.kernel << " ";
    list(step.inputs);
    if (!step.inputOffsets.empty()) {
      os << " at bytes [";
      llvm::interleaveComma(step.inputOffsets, os);
      os << "]";
    }
    os << " -> ";
    list(std::vector<int>(step.outputs.begin(), step.outputs.begin() + step.results));
    if (static_cast<size_t>(step.results) < step.outputs.size()) {
      os << " scratch ";
      list(std::vector<int>(step.outputs.begin() + step.results, step.outputs.end()));
    }
    os << "  // " << step.label << "\n";
  }
  os << "arguments ";
  list(program.arguments);
  os << "\nresults";
  for (size_t r = 0; r < program.results.size(); ++r) {
    os << (r ? ", %" : " %") << program.results[r];
    if (r < program.donors.size() && program.donors[r] >= 0)
      os << " into argument " << program.donors[r];
    else if (r < program.inArena.size() && program.inArena[r])
      os << " from the arena";
  }
  os << "\n";
  auto values = [&](const char *what, const std::vector<runtime::Program::Value> &list) {
    for (const runtime::Program::Value &value : list) {
      os << what << " " << value.name << ": " << runtime::nameOf(value.role) << " " << value.dtype
         << "[";
      llvm::interleave(value.shape, os, "x");
      os << "]\n";
    }
  };
  values("argument", program.signature.arguments);
  values("result", program.signature.results);
  return text;
}

} // namespace sinter::compiler
