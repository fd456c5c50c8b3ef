//===- LowerLazyGraph.cpp - from the lazy graph to the sinter dialect -----===//
//
// One lazy op becomes one sinter op (the op sets are the same by design);
// the only translation is of types, attributes and locations, and the f32
// conversions around the reductions and library ops of f16 and bf16 values
// (Note [Half precision in f32]). Data nodes
// become function arguments and sources (full, iota, random) become ops, so
// the function is a complete description of the step.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/LowerLazyGraph.h"

#include "sinter/Dialect/Sinter/SinterOps.h"
#include "sinter/lazy/Graph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

namespace sinter::compiler {
namespace {

using lazy::Node;
using lazy::Op;
using namespace mlir;
using namespace sinter::ir;

Type elementType(OpBuilder &b, DType dtype) {
  switch (dtype) {
  case DType::f32:
    return b.getF32Type();
  case DType::f16:
    return b.getF16Type();
  case DType::bf16:
    return b.getBF16Type();
  case DType::i32:
    return b.getI32Type();
  case DType::i64:
    return b.getI64Type();
  case DType::boolean:
    return b.getI1Type();
  }
  return b.getF32Type();
}

RankedTensorType tensorType(OpBuilder &b, const Node &node) {
  return RankedTensorType::get(node.shape, elementType(b, node.dtype));
}

/// A splat constant of `type` holding `value`.
Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Type element = type.getElementType();
  Attribute scalar;
  if (isa<FloatType>(element))
    scalar = b.getFloatAttr(element, value);
  else if (element.isInteger(1))
    scalar = b.getIntegerAttr(element, value != 0 ? 1 : 0);
  else // the frontend rounded the value to the dtype: it is in range
    scalar = b.getIntegerAttr(element, static_cast<int64_t>(value));
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, scalar));
}

class Lowering {
public:
  Lowering(OpBuilder &builder) : b(builder) {}

  /// The user's line; for the backward pass and optimizer updates, named
  /// "backward" or "update" (memory reports sort buffers by it).
  Location locationOf(const Node &node) {
    Location line = FileLineColLoc::get(b.getContext(), node.loc.file_name(), node.loc.line(),
                                        node.loc.column());
    if (node.phase == lazy::Phase::Forward)
      return line;
    return NameLoc::get(
        b.getStringAttr(node.phase == lazy::Phase::Backward ? "backward" : "update"), line);
  }

  /// Note [Half precision in f32]
  /// Pointwise ops of f16 and bf16 values are fused and computed in f32 with
  /// each result rounded to its dtype (Note [Half precision in kernels] in
  /// kernels/common/half.h). Every other op that computes (a reduction, a
  /// library op: matrix products, convolutions, pooling, gather, scatter-add,
  /// concat, argmax) is given f32 operands, converted where they are half,
  /// and its half result is converted back: a sum of bf16 values accumulates
  /// in f32 and is rounded once, as PyTorch's sums do, and a matrix product
  /// of bf16 values is the f32 product, rounded (cuBLAS's and oneDNN's
  /// accumulation in f32). A scatter-add of half values is likewise
  /// accumulated in f32 and rounded once, where PyTorch's rounds after each
  /// add. The conversions fuse into the kernels beside the
  /// op. Collectives keep their dtype (the communicators take f16 and bf16).
  Value lower(const Node &node, ArrayRef<Value> in) {
    RankedTensorType type = tensorType(b, node);
    if (!computesInF32(node.op))
      return lowerAs(node, in, type);
    auto isHalf = [](Type t) {
      Type element = cast<ShapedType>(t).getElementType();
      return element.isF16() || element.isBF16();
    };
    Location loc = locationOf(node);
    auto asF32 = [&](Type t) { return cast<RankedTensorType>(t).clone(b.getF32Type()); };
    bool half = isHalf(type);
    SmallVector<Value> wide;
    for (Value operand : in) {
      half |= isHalf(operand.getType());
      wide.push_back(isHalf(operand.getType())
                         ? b.create<ConvertOp>(loc, asF32(operand.getType()), operand)
                         : operand);
    }
    if (!half)
      return lowerAs(node, in, type);
    Value result = lowerAs(node, wide, isHalf(type) ? asF32(type) : type);
    return isHalf(type) ? b.create<ConvertOp>(loc, type, result) : result;
  }

private:
  /// The ops computed in f32 when their operands or result are half
  /// (Note [Half precision in f32]).
  static bool computesInF32(Op op) {
    switch (op) {
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ArgMax:
    case Op::Matmul:
    case Op::Conv2d:
    case Op::Conv2dBackwardInput:
    case Op::Conv2dBackwardFilter:
    case Op::Pool2d:
    case Op::Pool2dBackward:
    case Op::Concat:
    case Op::Gather:
    case Op::ScatterAdd:
      return true;
    default:
      return false;
    }
  }

  /// `node` as a sinter op of result `type` on operands `in`.
  Value lowerAs(const Node &node, ArrayRef<Value> in, RankedTensorType type) {
    Location loc = locationOf(node);
    const lazy::Attrs &a = node.attrs;
    switch (node.op) {
    case Op::Data:
      return {}; // arguments are made by the caller
    case Op::Full:
      return splat(b, loc, type, a.value);
    case Op::Iota:
      return b.create<IotaOp>(loc, type, a.axis);
    case Op::Random: // the operand is the Philox key (kernels::randomKey)
      return b.create<RandomOp>(
          loc, type, a.kind == 0 ? RandomDistribution::uniform : RandomDistribution::normal, in[0],
          0);
    case Op::Compare:
      return b.create<CompareOp>(loc, static_cast<ComparisonDirection>(a.kind), in[0], in[1]);
    case Op::Select:
      return b.create<SelectOp>(loc, type, in[0], in[1], in[2]);
    case Op::Convert:
      return b.create<ConvertOp>(loc, type, in[0]);
    case Op::Broadcast:
      return b.create<BroadcastInDimOp>(loc, type, in[0], a.dims);
    case Op::Reshape:
      return b.create<ReshapeOp>(loc, type, in[0]);
    case Op::Transpose:
      return b.create<TransposeOp>(loc, in[0], a.dims);
    case Op::Slice:
      return b.create<SliceOp>(loc, in[0], a.dims, a.dims2, a.dims3);
    case Op::Concat:
      return b.create<ConcatOp>(loc, in, a.axis);
    case Op::Gather:
      return b.create<GatherOp>(loc, in[0], in[1], a.axis);
    case Op::ScatterAdd:
      return b.create<ScatterAddOp>(loc, type, in[0], in[1], in[2], a.axis);
    case Op::ReduceSum:
      return b.create<ReduceSumOp>(loc, in[0], a.dims, a.flag);
    case Op::ReduceMax:
      return b.create<ReduceMaxOp>(loc, in[0], a.dims, a.flag);
    case Op::ArgMax:
      return b.create<ArgMaxOp>(loc, in[0], a.axis, a.flag);
    case Op::Matmul:
      return b.create<MatmulOp>(loc, in[0], in[1], a.flag, a.flag2);
    case Op::Conv2d:
      return b.create<Conv2dOp>(loc, in[0], in[1], a.dims, a.dims2, a.dims3, a.axis);
    case Op::Conv2dBackwardInput:
      return b.create<Conv2dBackwardInputOp>(loc, type, in[0], in[1], a.dims, a.dims2, a.dims3,
                                             a.axis);
    case Op::Conv2dBackwardFilter:
      return b.create<Conv2dBackwardFilterOp>(loc, type, in[0], in[1], a.dims, a.dims2, a.dims3,
                                              a.axis);
    case Op::Pool2d:
      return b.create<Pool2dOp>(loc, a.kind == 0 ? PoolKind::max : PoolKind::avg, in[0], a.dims,
                                a.dims2, a.dims3);
    case Op::AllReduce:
      return b.create<AllReduceOp>(loc, static_cast<ReductionKind>(a.kind), ValueRange{in[0]})
          ->getResult(0);
    case Op::ReduceScatter:
      return b.create<ReduceScatterOp>(loc, static_cast<ReductionKind>(a.kind), in[0], a.axis);
    case Op::AllGather:
      return b.create<AllGatherOp>(loc, in[0], a.axis);
    case Op::Pool2dBackward:
      return b.create<Pool2dBackwardOp>(loc, type, a.kind == 0 ? PoolKind::max : PoolKind::avg,
                                        in[0], in[1], a.dims, a.dims2, a.dims3);
      // Note [The op table] in sinter/lazy/Ops.def.
#define SINTER_UNARY_OP(Name, ...)                                                                 \
  case Op::Name:                                                                                   \
    return b.create<Name##Op>(loc, type, in[0]);
#define SINTER_BINARY_OP(Name, ...)                                                                \
  case Op::Name:                                                                                   \
    return b.create<Name##Op>(loc, type, in[0], in[1]);
#include "sinter/lazy/Ops.def"
    }
    return {};
  }

  OpBuilder &b;
};

} // namespace

OwningOpRef<ModuleOp> lowerLazyGraph(MLIRContext &context,
                                     const std::vector<lazy::NodePtr> &outputs,
                                     const std::string &name) {
  OpBuilder b(&context);
  Location unknown = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(unknown);
  // The same order as the graph fingerprint (sinter/lazy/Graph.h): the
  // function's arguments are the data nodes in this order.
  std::vector<const Node *> order = lazy::topological_order(outputs);

  SmallVector<Type> argTypes, resultTypes;
  SmallVector<Location> argLocs;
  for (const Node *node : order)
    if (node->op == Op::Data) {
      argTypes.push_back(tensorType(b, *node));
      argLocs.push_back(FileLineColLoc::get(&context, node->loc.file_name(), node->loc.line(),
                                            node->loc.column()));
    }
  for (const lazy::NodePtr &output : outputs)
    resultTypes.push_back(tensorType(b, *output));

  b.setInsertionPointToEnd(module->getBody());
  auto function = b.create<func::FuncOp>(unknown, name, b.getFunctionType(argTypes, resultTypes));
  Block *entry = function.addEntryBlock();
  for (auto [arg, loc] : llvm::zip(entry->getArguments(), argLocs))
    arg.setLoc(loc);
  b.setInsertionPointToStart(entry);

  Lowering lowering(b);
  llvm::DenseMap<const Node *, Value> values;
  unsigned nextArg = 0;
  for (const Node *node : order) {
    if (node->op == Op::Data) {
      values[node] = entry->getArgument(nextArg++);
      continue;
    }
    SmallVector<Value> operands;
    for (const lazy::NodePtr &operand : node->operands)
      operands.push_back(values.lookup(operand.get()));
    values[node] = lowering.lower(*node, operands);
  }
  SmallVector<Value> results;
  for (const lazy::NodePtr &output : outputs)
    results.push_back(values.lookup(output.get()));
  b.create<func::ReturnOp>(unknown, results);

  if (failed(verify(*module)))
    return nullptr;
  return module;
}

bool lowerLazyGraphToText(const std::vector<lazy::NodePtr> &outputs, std::string &text,
                          bool withLocations, const std::string &name) {
  MLIRContext context;
  context.loadDialect<SinterDialect, func::FuncDialect>();
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    diagnosticStream << diagnostic.getLocation() << ": " << diagnostic << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = lowerLazyGraph(context, outputs, name);
  if (!module) {
    text = diagnostics;
    return false;
  }
  text.clear();
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(os, flags);
  return true;
}

} // namespace sinter::compiler
