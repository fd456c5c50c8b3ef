//===- KernelPlan.cpp - the analysis that plans a fusion's CPU kernel -----===//
//
// Note [Kernel plans] in sinter/Codegen/KernelPlan.h. Every decision the CPU
// renderer once made while it wrote text is made here, once, into plain data:
// the domain (Note [Row kernels] in compiler/lib/Renderers/CpuRenderer.cpp),
// the locals of the output loop, the values stored and where, the loops of
// independent parts (Note [A loop per independent part]), each reduction's
// strategy, the scratch buffers, and which results may be written over which
// inputs.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/KernelPlan.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/CpuRenderer.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Passes/FusionPolicy.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace sinter::ir;

namespace sinter::codegen {

bool KernelPlan::writesInPlace(unsigned input, unsigned result) const {
  return std::find(inPlace.begin(), inPlace.end(), std::make_pair(input, result)) != inPlace.end();
}

namespace {

int64_t elements(Value v) { return cast<ShapedType>(v.getType()).getNumElements(); }

/// Ops computed at their result's own index from their operands at the same
/// index.
bool isPointwiseOp(Operation &op) {
  return op.getNumResults() == 1 &&
         !isa<ReduceSumOp, ReduceMaxOp, BroadcastInDimOp, TransposeOp, SliceOp, IotaOp, RandomOp>(
             op);
}

ArrayRef<int64_t> reducedDimsOf(Operation &op) {
  return isa<ReduceSumOp>(op) ? cast<ReduceSumOp>(op).getDims() : cast<ReduceMaxOp>(op).getDims();
}

std::string dtypeOf(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << element;
  return text;
}

std::vector<int64_t> shapeOf(Value v) {
  ArrayRef<int64_t> shape = cast<ShapedType>(v.getType()).getShape();
  return {shape.begin(), shape.end()};
}

std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Where a layout op reads its operand (KernelPlan::IndexMap), if it is one.
bool indexMapOf(Operation &op, KernelPlan::IndexMap &map) {
  if (op.getNumOperands() == 0 || op.getNumResults() != 1)
    return false;
  ArrayRef<int64_t> to = cast<ShapedType>(op.getResult(0).getType()).getShape();
  ArrayRef<int64_t> from = cast<ShapedType>(op.getOperand(0).getType()).getShape();
  std::vector<int64_t> operand = rowMajorStrides(from);
  map = {};
  if (auto broadcast = dyn_cast<BroadcastInDimOp>(op)) {
    map.strides.assign(to.size(), 0);
    for (auto [j, d] : llvm::enumerate(broadcast.getDims()))
      if (from[j] != 1)
        map.strides[d] = operand[j];
    return true;
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    for (int64_t d : transpose.getPerm())
      map.strides.push_back(operand[d]);
    return true;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    for (size_t d = 0; d < from.size(); ++d) {
      map.offset += slice.getStart()[d] * operand[d];
      map.strides.push_back(slice.getStep()[d] * operand[d]);
    }
    return true;
  }
  if (isa<ReshapeOp>(op)) { // the same row-major index
    map.strides = rowMajorStrides(to);
    return true;
  }
  return false;
}

/// The attributes the kernel's code is written from (KernelPlan::Value).
void attributesOf(Operation &op, KernelPlan::Value &value) {
  auto assign = [](std::vector<int64_t> &to, ArrayRef<int64_t> from) {
    to.assign(from.begin(), from.end());
  };
  if (auto broadcast = dyn_cast<BroadcastInDimOp>(op)) {
    assign(value.dims, broadcast.getDims());
  } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
    assign(value.dims, transpose.getPerm());
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    assign(value.start, slice.getStart());
    assign(value.step, slice.getStep());
  } else if (auto iota = dyn_cast<IotaOp>(op)) {
    value.dims = {static_cast<int64_t>(iota.getDim())};
  } else if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return;
    Attribute element = dense.getSplatValue<Attribute>();
    if (auto f = dyn_cast<FloatAttr>(element)) {
      value.splat = true;
      value.number = f.getValueAsDouble();
    } else if (auto i = dyn_cast<IntegerAttr>(element)) {
      value.splat = true;
      value.integer = i.getValue().getSExtValue();
    }
  } else if (auto compare = dyn_cast<CompareOp>(op)) {
    value.direction = stringifyComparisonDirection(compare.getDirection()).str();
  } else if (auto random = dyn_cast<RandomOp>(op)) {
    value.distribution = stringifyRandomDistribution(random.getDistribution()).str();
    value.stream = random.getStream();
  }
}

class Analysis {
public:
  Analysis(FusionOp fusion, const KernelPlan::Choices &choices)
      : body(fusion.getBody().front()), yield(cast<YieldOp>(body.getTerminator())) {
    plan.choices = choices;
  }

  KernelPlan run() {
    for (BlockArgument arg : body.getArguments())
      plan.inputs.push_back({dtypeOf(arg.getType()), shapeOf(arg)});
    int index = 0;
    for (Operation &op : body.without_terminator())
      indexOf[&op] = index++;
    pointwise();
    int64_t n = yield.getNumOperands() == 0 ? 0 : elements(yield.getOperand(0));
    bool oneSize = llvm::all_of(yield.getValues(), [&](Value v) { return elements(v) == n; });
    if (rowDomain()) {
      plan.kind = KernelPlan::Kind::Rows;
      plan.rows = rows, plan.cols = cols;
    } else {
      plan.kind = oneSize ? KernelPlan::Kind::Elementwise : KernelPlan::Kind::PerResult;
      plan.elements = oneSize ? n : 0;
    }
    describeValues();
    if (plan.kind == KernelPlan::Kind::Elementwise)
      independentParts(n);
    for (Value v : yield.getValues())
      plan.results.push_back({operandIndex(v), -1});
    if (plan.kind == KernelPlan::Kind::Elementwise)
      for (auto [k, result] : llvm::enumerate(plan.results))
        result.part = resultPart[k];
    if (plan.kind != KernelPlan::Kind::PerResult)
      inPlacePairs();
    return std::move(plan);
  }

private:
  int operandIndex(Value v) const {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return -1 - static_cast<int>(arg.getArgNumber());
    return indexOf.lookup(v.getDefiningOp());
  }

  bool isLocal(Operation &op) const {
    return op.getNumResults() == 1 && locals.contains(op.getResult(0));
  }

  /// Whether the kernel stores `op`'s value: used more than once, and not a
  /// reduction (stored already), a layout op, an iota or a constant (an
  /// index computation and a load cost less than a store and a load).
  bool stores(Operation &op) const {
    if (op.getNumResults() != 1 || isLocal(op))
      return false;
    Value v = op.getResult(0);
    return !isa<ReduceSumOp, ReduceMaxOp, ConstantOp, BroadcastInDimOp, TransposeOp, SliceOp,
                ReshapeOp, IotaOp>(op) &&
           std::distance(v.use_begin(), v.use_end()) >= 2;
  }

  /// The values only ever read at the output loop's index: pointwise ops
  /// whose users are all such values or the results (when every result has
  /// one size). Those become locals of the output loop, computed once per
  /// element however often they are used; the rest (read at remapped
  /// indices, or by reductions) stay functions of an index.
  void pointwise() {
    int64_t n = yield.getNumOperands() == 0 ? 0 : elements(yield.getOperand(0));
    if (!llvm::all_of(yield.getValues(), [&](Value v) { return elements(v) == n; }))
      return;
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      if (!isPointwiseOp(op))
        continue;
      Value v = op.getResult(0);
      bool onlyHere = llvm::all_of(v.getUsers(), [&](Operation *user) {
        return isa<YieldOp>(user) ||
               (user->getNumResults() == 1 && locals.contains(user->getResult(0)));
      });
      if (onlyHere && elements(v) == n)
        locals.insert(v);
    }
  }

  /// Note [Row kernels] in compiler/lib/Renderers/CpuRenderer.cpp: every
  /// reduction is over the same trailing `cols` elements of `rows` rows, and no
  /// value computed in the row loop is read at another row's index.
  bool rowDomain() {
    rows = cols = 0;
    for (Operation &op : body.without_terminator()) {
      if (!isa<ReduceSumOp, ReduceMaxOp>(op))
        continue;
      ArrayRef<int64_t> dims = reducedDimsOf(op);
      int64_t rank = cast<ShapedType>(op.getOperand(0).getType()).getRank();
      int64_t k = static_cast<int64_t>(dims.size());
      if (!llvm::all_of(dims, [&](int64_t d) { return d >= rank - k; }))
        return false; // a general reduction reads across rows
      int64_t r = elements(op.getResult(0));
      if (r == 0)
        return false;
      int64_t c = elements(op.getOperand(0)) / r;
      if (rows != 0 && (r != rows || c != cols))
        return false;
      rows = r, cols = c;
    }
    if (rows < 2 || cols < 2)
      return false;
    for (Value v : yield.getValues())
      if (elements(v) != rows * cols && elements(v) != rows)
        return false;
    // Values valid only for the current row: reductions, stored values, and
    // anything computed from them.
    rowBound.clear();
    for (Operation &op : body.without_terminator()) {
      bool bound = isa<ReduceSumOp, ReduceMaxOp>(op) || stores(op);
      bool fromBound =
          llvm::any_of(op.getOperands(), [&](Value v) { return rowBound.contains(v); });
      if (fromBound && !rowSafe(op))
        return false;
      if (bound && elements(op.getResult(0)) != rows * cols && elements(op.getResult(0)) != rows)
        return false;
      if (bound || fromBound)
        rowBound.insert(op.getResult(0));
    }
    return true;
  }

  /// Whether `op` reads its row-bound operands only within the current row.
  bool rowSafe(Operation &op) const {
    if (isPointwiseOp(op) || isa<ReduceSumOp, ReduceMaxOp>(op))
      return true;
    auto broadcast = dyn_cast<BroadcastInDimOp>(op);
    if (!broadcast || elements(op.getResult(0)) != rows * cols)
      return false;
    // The operand's index must depend only on the leading result dims that
    // make up the row number.
    ArrayRef<int64_t> shape = cast<ShapedType>(broadcast.getType()).getShape();
    ArrayRef<int64_t> from = cast<ShapedType>(broadcast.getOperand().getType()).getShape();
    int64_t k = static_cast<int64_t>(shape.size()), inner = 1;
    while (k > 0 && inner < cols)
      inner *= shape[--k];
    if (inner != cols)
      return false;
    for (auto [j, d] : llvm::enumerate(broadcast.getDims()))
      if (from[j] != 1 && d >= k)
        return false;
    return true;
  }

  /// A scratch buffer of `count` elements of `t`; returns its number.
  int scratchBuffer(const std::string &t, int64_t count) {
    plan.scratchBytes.push_back(std::max<int64_t>(count, 1) * cppElementBytes(t));
    return static_cast<int>(plan.scratchBytes.size()) - 1;
  }

  /// Each value's description and how the kernel holds it, in the order the
  /// renderer emits them (so the scratch buffers are numbered as it writes
  /// them).
  void describeValues() {
    bool rowMode = plan.kind == KernelPlan::Kind::Rows;
    int64_t rowStack = 0;
    for (Operation &op : body.without_terminator()) {
      KernelPlan::Value &value = plan.values.emplace_back();
      value.op = op.getName().stripDialect().str();
      if (op.getNumResults() == 1) {
        value.dtype = dtypeOf(op.getResult(0).getType());
        value.shape = shapeOf(op.getResult(0));
      }
      for (Value operand : op.getOperands())
        value.operands.push_back(operandIndex(operand));
      value.hasIndexMap = indexMapOf(op, value.map);
      attributesOf(op, value);
      value.perRow = rowMode && op.getNumResults() == 1 && rowBound.contains(op.getResult(0));
      if (isLocal(op)) {
        value.storage = KernelPlan::Storage::Local;
        continue;
      }
      std::string t = op.getNumResults() == 1 ? cppElementTypeOf(value.dtype) : "";
      if (isa<ReduceSumOp, ReduceMaxOp>(op)) {
        ArrayRef<int64_t> dims = reducedDimsOf(op);
        value.reducedDims.assign(dims.begin(), dims.end());
        reduction(op, value, t);
        continue;
      }
      if (!stores(op))
        continue;
      Value v = op.getResult(0);
      int64_t rowBytes = cols * cppElementBytes(t);
      if (rowMode && elements(v) == rows * cols &&
          rowStack + rowBytes <= plan.choices.rowStackBytes) {
        rowStack += rowBytes;
        value.storage = KernelPlan::Storage::RowStack;
        continue;
      }
      stored(value, t, elements(v));
    }
  }

  /// A value the kernel reads at other indices: in a scratch buffer of
  /// `count` elements, or recomputed where read (Note [Plan choices]).
  void stored(KernelPlan::Value &value, const std::string &t, int64_t count) {
    if (!plan.choices.storesValues)
      return;
    value.storage = KernelPlan::Storage::Scratch;
    value.scratch = scratchBuffer(t, count);
  }

  /// A reduction's strategy and its buffer (what emitValue writes for it).
  void reduction(Operation &op, KernelPlan::Value &value, const std::string &t) {
    ArrayRef<int64_t> dims = reducedDimsOf(op);
    ArrayRef<int64_t> from = cast<ShapedType>(op.getOperand(0).getType()).getShape();
    int64_t rank = static_cast<int64_t>(from.size()), k = static_cast<int64_t>(dims.size());
    Value result = op.getResult(0);
    if (llvm::all_of(dims, [&](int64_t d) { return d >= rank - k; })) {
      value.reduction = KernelPlan::Reduction::Row;
      if (elements(result) == 0)
        return; // nothing to compute
      stored(value, t, elements(result));
      return;
    }
    stored(value, t, elements(result));
    llvm::SmallVector<bool> reduced(from.size(), false);
    for (int64_t d : dims)
      reduced[d] = true;
    int64_t count = 1;
    for (size_t d = 0; d < from.size(); ++d)
      if (reduced[d])
        count *= from[d];
    bool leading = llvm::all_of(
        llvm::enumerate(dims), [](auto e) { return e.value() == static_cast<int64_t>(e.index()); });
    int64_t trailing = 0, inner = 1;
    while (trailing < rank && reduced[rank - 1 - trailing])
      inner *= from[rank - 1 - trailing++];
    const KernelPlan::Choices &choices = plan.choices;
    if (leading && choices.columnBlock > 0 && elements(result) >= choices.columnBlock / 4 &&
        count > 0)
      value.reduction = KernelPlan::Reduction::ColumnBlocks;
    else if (trailing > 0 && choices.lanes > 0 && inner >= choices.lanes && count > 0)
      value.reduction = KernelPlan::Reduction::TrailingBlocks;
    else
      value.reduction = KernelPlan::Reduction::General;
  }

  /// Note [A loop per independent part] in
  /// compiler/lib/Renderers/CpuRenderer.cpp: results that share no full-size
  /// input or computed value get loops of their own.
  void independentParts(int64_t n) {
    llvm::EquivalenceClasses<void *> parts;
    // Small values, constants and broadcasts of small values connect
    // nothing: each loop reads (or recomputes) them.
    auto connects = [&](Value v) {
      if (elements(v) < n)
        return false;
      Operation *producer = v.getDefiningOp();
      if (producer && isa<ConstantOp>(producer))
        return false;
      if (auto broadcast = dyn_cast_or_null<BroadcastInDimOp>(producer))
        return elements(broadcast.getOperand()) >= n;
      return true;
    };
    auto key = [](Value v) -> void * {
      if (Operation *producer = v.getDefiningOp())
        return producer;
      return v.getAsOpaquePointer();
    };
    for (Operation &op : body.without_terminator()) {
      parts.insert(&op);
      for (Value operand : op.getOperands())
        if (connects(operand))
          parts.unionSets(&op, key(operand));
    }
    llvm::DenseMap<void *, int> partOf;
    for (Value value : yield.getValues()) {
      void *leader = parts.getOrInsertLeaderValue(key(value));
      auto [it, inserted] = partOf.try_emplace(leader, plan.parts);
      if (inserted)
        ++plan.parts;
      resultPart.push_back(it->second);
    }
    for (Operation &op : body.without_terminator()) {
      auto it = partOf.find(parts.getOrInsertLeaderValue(&op));
      if (it != partOf.end())
        plan.values[indexOf.lookup(&op)].part = it->second;
    }
  }

  /// Every (input, result) pair where the input reaches that result, and
  /// every other, only through ops that keep the index (or reductions,
  /// computed before the writes). The kernel computes all its results in one
  /// loop, or row by row with a row's reads before its writes.
  void inPlacePairs() {
    for (unsigned input = 0; input < body.getNumArguments(); ++input) {
      SmallVector<Value> work = {body.getArgument(input)};
      llvm::DenseSet<Operation *> seen;
      llvm::SmallVector<bool> reaches(yield.getNumOperands(), false);
      bool keepsIndex = true;
      while (!work.empty() && keepsIndex) {
        Value value = work.pop_back_val();
        for (OpOperand &use : value.getUses()) {
          Operation *user = use.getOwner();
          if (isa<YieldOp>(user)) {
            reaches[use.getOperandNumber()] = true;
            continue;
          }
          if (!seen.insert(user).second || isa<ReduceSumOp, ReduceMaxOp>(user))
            continue;
          // A random op reads its seed at index 0, whatever it writes.
          if (isa<RandomOp>(user) ||
              (!isa<ReshapeOp>(user) &&
               sinter::fusion::roleOf(user) != sinter::fusion::Role::Elementwise)) {
            keepsIndex = false;
            break;
          }
          for (Value next : user->getResults())
            work.push_back(next);
        }
      }
      if (!keepsIndex)
        continue;
      for (unsigned result = 0; result < reaches.size(); ++result)
        if (reaches[result])
          plan.inPlace.push_back({input, result});
    }
  }

  Block &body;
  YieldOp yield;
  KernelPlan plan;
  llvm::DenseMap<Operation *, int> indexOf;
  llvm::DenseSet<Value> locals;
  llvm::DenseSet<Value> rowBound;
  int64_t rows = 0, cols = 0;
  std::vector<int> resultPart;
};

std::string join(const std::vector<int64_t> &values, const char *separator) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? separator : "") + std::to_string(values[i]);
  return text;
}

/// The fewest significant digits (at least 6) that read back as the same
/// f32 value.
std::string shortestFloat(double value) {
  std::string text;
  for (int digits = 6; digits <= 9; ++digits) {
    text.clear();
    llvm::raw_string_ostream(text) << llvm::format("%.*g", digits, value);
    if (static_cast<float>(std::strtod(text.c_str(), nullptr)) == static_cast<float>(value))
      break;
  }
  return text;
}

std::string operandName(int operand) {
  return operand < 0 ? "%in" + std::to_string(-1 - operand) : "%" + std::to_string(operand);
}

} // namespace

KernelPlan planFusion(FusionOp fusion, const KernelPlan::Choices &choices) {
  return Analysis(fusion, choices).run();
}

KernelPlan planCpuKernel(FusionOp fusion) { return planFusion(fusion, cpuPlanChoices()); }

std::string formatKernelPlan(const KernelPlan &plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (plan.kind) {
  case KernelPlan::Kind::Elementwise:
    os << "elementwise over " << plan.elements << " elements in " << plan.parts
       << (plan.parts == 1 ? " loop" : " loops") << "\n";
    break;
  case KernelPlan::Kind::Rows:
    os << "rows: " << plan.rows << " rows of " << plan.cols << "\n";
    break;
  case KernelPlan::Kind::PerResult:
    os << "a loop per result\n";
    break;
  }
  for (auto [i, input] : llvm::enumerate(plan.inputs))
    os << "  input %in" << i << ": " << input.dtype << "[" << join(input.shape, "x") << "]\n";
  static const char *kStorage[] = {"function", "local", "row on the stack", "scratch"};
  static const char *kReduction[] = {"", "row", "column blocks", "trailing blocks", "general"};
  for (auto [i, value] : llvm::enumerate(plan.values)) {
    os << "  %" << i << " = " << value.op;
    if (value.splat && isFloatDtype(value.dtype))
      os << " " << shortestFloat(value.number);
    else if (value.splat)
      os << " " << value.integer;
    if (!value.direction.empty())
      os << " " << value.direction;
    if (!value.distribution.empty())
      os << " " << value.distribution << " stream " << value.stream;
    if (value.op == "iota")
      os << " dim " << value.dims[0];
    for (size_t k = 0; k < value.operands.size(); ++k)
      os << (k ? ", " : " ") << operandName(value.operands[k]);
    os << " : " << value.dtype << "[" << join(value.shape, "x") << "]";
    if (value.hasIndexMap)
      os << " reads at " << value.map.offset << " + strides [" << join(value.map.strides, ", ")
         << "]";
    if (value.reduction != KernelPlan::Reduction::None)
      os << " reduced over [" << join(value.reducedDims, ", ") << "] by "
         << kReduction[static_cast<int>(value.reduction)];
    os << ", " << kStorage[static_cast<int>(value.storage)];
    if (value.scratch >= 0)
      os << " " << value.scratch;
    if (value.perRow)
      os << ", per row";
    if (value.part >= 0 && plan.kind == KernelPlan::Kind::Elementwise)
      os << ", loop " << value.part;
    os << "\n";
  }
  for (auto [k, result] : llvm::enumerate(plan.results)) {
    os << "  result " << k << " = " << operandName(result.value);
    if (result.part >= 0)
      os << " in loop " << result.part;
    os << "\n";
  }
  for (auto [s, bytes] : llvm::enumerate(plan.scratchBytes))
    os << "  scratch " << s << ": " << bytes << " bytes\n";
  for (auto [input, result] : plan.inPlace)
    os << "  result " << result << " may be written over %in" << input << "\n";
  const KernelPlan::Choices &choices = plan.choices;
  os << "  chosen: " << choices.lanes << " lanes, " << choices.minRows << " rows, column blocks of "
     << choices.columnBlock << ", " << choices.rowStackBytes << " bytes of rows on the stack, "
     << (choices.storesValues ? "stored values in scratch" : "values recomputed where read")
     << "\n";
  return text;
}

} // namespace sinter::codegen
