//===- FusionPolicy.cpp - what may be fused, and why not ------------------===//
#include "sinter/Passes/FusionPolicy.h"

#include "sinter/Dialect/Sinter/SinterOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sinter::ir;

namespace sinter::fusion {
namespace {

std::string shapeText(Type type) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(cast<ShapedType>(type).getShape(), os, ", ");
  os << "]";
  return text;
}

int64_t elementsOf(Value value) { return cast<ShapedType>(value.getType()).getNumElements(); }

/// Why a Library op is not fused ("" for ops that may be).
std::string libraryReason(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<MatmulOp>([](auto) {
        return "matmul is a library call (cuBLASLt on GPU, oneDNN or OpenBLAS on CPU)";
      })
      .Case<Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp>([](auto) {
        return "convolutions are library calls (cuDNN on GPU, im2col and sgemm on CPU)";
      })
      .Case<Pool2dOp, Pool2dBackwardOp>([](auto) { return "pooling windows are not fused yet"; })
      .Case<GatherOp, ScatterAddOp>(
          [](auto) { return "data-dependent indexing (gather, scatter_add) is not fused yet"; })
      .Case<ConcatOp>([](auto) { return "concat is not fused yet"; })
      .Case<ArgMaxOp>([](auto) { return "argmax is not fused yet"; })
      .Case<AllReduceOp, ReduceScatterOp, AllGatherOp>(
          [](auto) { return "a collective between ranks"; })
      .Case<ConstantOp>([](auto) { return "a dense constant is read from memory, not computed"; })
      .Default([](Operation *other) {
        return text("'", other->getName().getStringRef(), "' is not a sinter compute op");
      });
}

} // namespace

Role roleOf(Operation *op) {
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    return dense && dense.isSplat() ? Role::Constant : Role::Library;
  }
  if (isa<ReduceSumOp, ReduceMaxOp>(op))
    return Role::Reduction;
  if (isa<BroadcastInDimOp, ReshapeOp, TransposeOp, SliceOp>(op))
    return Role::Layout;
    // The op table's ops (Note [The op table] in sinter/lazy/Ops.def), then
    // the elementwise ops with attributes or a third operand, and sources.
    // clang-format off
#define SINTER_UNARY_OP(Name, ...) Name##Op,
#define SINTER_BINARY_OP SINTER_UNARY_OP
  if (isa<
#include "sinter/lazy/Ops.def"
          CompareOp, SelectOp, ConvertOp, IotaOp, RandomOp>(op))
    return Role::Elementwise;
  // clang-format on
  return Role::Library;
}

FusionDecision canFuse(Operation *op, const FusionRules &rules) {
  if (roleOf(op) == Role::Library)
    return FusionDecision::forbid(libraryReason(op));
  if (rules.isLibraryCall && rules.isLibraryCall(op))
    return FusionDecision::forbid(text("the ", rules.target.empty() ? "" : rules.target + " ",
                                       "target runs '", op->getName().getStringRef(),
                                       "' as a library call"));
  return FusionDecision::allow();
}

FusionDecision reductionDomain(Operation *op, std::optional<Domain> &domain) {
  domain.reset();
  if (roleOf(op) != Role::Reduction)
    return FusionDecision::allow();
  ArrayRef<int64_t> dims =
      isa<ReduceSumOp>(op) ? cast<ReduceSumOp>(op).getDims() : cast<ReduceMaxOp>(op).getDims();
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t rank = type.getRank(), k = static_cast<int64_t>(dims.size());
  SmallVector<int64_t> sorted(dims);
  llvm::sort(sorted);
  for (int64_t i = 0; i < k; ++i)
    if (sorted[i] != rank - k + i) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "reducing dims [";
      llvm::interleave(dims, os, ", ");
      os << "] of " << shapeText(type)
         << " is not a row reduction (the reduced dims must be trailing)";
      return FusionDecision::forbid(os.str());
    }
  Domain d{1, 1};
  for (int64_t i = 0; i < rank; ++i)
    (i < rank - k ? d.rows : d.cols) *= type.getDimSize(i);
  domain = d;
  return FusionDecision::allow();
}

FusionDecision fitsDomain(Operation *op, const Domain &domain) {
  int64_t whole = domain.rows * domain.cols;
  if (roleOf(op) == Role::Reduction) {
    std::optional<Domain> own;
    if (!reductionDomain(op, own) || !own || own->rows != domain.rows || own->cols != domain.cols)
      return FusionDecision::forbid(
          text("a row reduction of ", shapeText(op->getOperand(0).getType()),
               " does not match the fusion's ", domain.rows, " rows of ", domain.cols));
    return FusionDecision::allow();
  }
  for (Value result : op->getResults()) {
    int64_t n = elementsOf(result);
    if (n != whole && n != domain.rows)
      return FusionDecision::forbid(text("its ", n, " elements ", shapeText(result.getType()),
                                         " are neither the fusion's domain (", domain.rows, " x ",
                                         domain.cols, ") nor one per row"));
  }
  return FusionDecision::allow();
}

/// An equality or inequality test (Note [Equality needs the stored bits]).
static bool isEquality(Operation *op) {
  auto compare = dyn_cast<CompareOp>(op);
  return compare && (compare.getDirection() == ComparisonDirection::eq ||
                     compare.getDirection() == ComparisonDirection::ne);
}

FusionDecision canRecompute(Value value, ArrayRef<Operation *> cone, ArrayRef<Value> reads) {
  int64_t n = elementsOf(value);
  if (llvm::any_of(value.getUsers(), isEquality)) // Note [Equality needs the stored bits]
    return FusionDecision::forbid(
        "it is tested for equality, which a recomputation may round apart");
  if (static_cast<int64_t>(cone.size()) > kMaxRecomputedOps)
    return FusionDecision::forbid(
        text("its recipe has ", cone.size(), " ops, more than ", kMaxRecomputedOps));
  for (Operation *op : cone) {
    Role role = roleOf(op);
    if (role != Role::Elementwise && role != Role::Layout)
      return FusionDecision::forbid(
          text("its recipe has '", op->getName().getStringRef(), "', not elementwise"));
    // Note [Equality needs the stored bits]: an equality test of a
    // recomputed value (the gradient of a maximum: x == max(x), the maximum
    // stored) needs the bits the stored value was computed from; recomputed
    // in another kernel x may round otherwise (glibc's vector and scalar
    // exp differ in the last bit), and the test fails where it should hold.
    if (isEquality(op))
      for (Value operand : op->getOperands())
        if (llvm::is_contained(cone, operand.getDefiningOp()))
          return FusionDecision::forbid(
              "its recipe tests a recomputed value for equality, which may round apart");
    if (elementsOf(op->getResult(0)) != n)
      return FusionDecision::forbid(text("its recipe has '", op->getName().getStringRef(),
                                         "' of another size, ",
                                         shapeText(op->getResult(0).getType())));
  }
  // Reading two whole tensors to save storing one would move more memory.
  int64_t whole = llvm::count_if(reads, [&](Value v) { return elementsOf(v) >= n; });
  if (whole > 1)
    return FusionDecision::forbid(
        text("recomputing it would read ", whole, " tensors of its size instead of it"));
  return FusionDecision::allow();
}

bool isCopiedScalar(Operation *op) {
  if (op->getNumResults() != 1 || isa<RandomOp>(op))
    return false;
  // A value of one element, or a broadcast or reshape of one.
  if (roleOf(op) == Role::Elementwise)
    return elementsOf(op->getResult(0)) == 1;
  return isa<BroadcastInDimOp, ReshapeOp>(op) && elementsOf(op->getOperand(0)) == 1;
}

bool takesScalarCopies(Operation *reader, const FusionRules &rules) {
  return canFuse(reader, rules) && llvm::any_of(reader->getResults(), [](Value v) {
           return elementsOf(v) >= kCopiedForElements;
         });
}

} // namespace sinter::fusion
