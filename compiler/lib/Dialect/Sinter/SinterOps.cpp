//===- SinterOps.cpp - verifiers and result types of the sinter ops -------===//
//
// Every rule an op's operands must follow is checked here, in a verifier or
// in result type inference, with a message that names the actual shapes:
// these messages are what a developer sees when a lowering builds a wrong
// graph. Inference rules run both when building ops from C++ and when
// verifying parsed IR.
//
// Note [Explicit broadcasting]
// Elementwise ops take operands of exactly the result's type. PyTorch's
// implicit broadcasting is recorded as sinter.broadcast_in_dim, so the index
// map of every operand of a fused kernel is visible in the IR, and a shape
// mismatch in an elementwise op is always a bug in whoever built the graph.
//
//===----------------------------------------------------------------------===//
#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sinter::ir;

namespace {

/// "[4, 8]" for a shape (or any list of integers).
std::string listStr(ArrayRef<int64_t> values) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(values, os, ", ");
  os << "]";
  return text;
}

std::string shapeOf(Type type) { return listStr(cast<ShapedType>(type).getShape()); }

/// Reports rule violations of one op, either as a verifier error at the op's
/// location or, when inference runs without a location, silently.
class Reporter {
public:
  Reporter(std::optional<Location> loc, StringRef opName) : loc_(loc), opName_(opName) {}

  template <typename... Args> LogicalResult fail(const Args &...args) const {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "'" << opName_ << "' op ";
    (streamArg(os, args), ...);
    return emitOptionalError(loc_, os.str());
  }

private:
  // Types are quoted, as InFlightDiagnostic prints them.
  template <typename T> static void streamArg(llvm::raw_ostream &os, const T &arg) {
    if constexpr (std::is_base_of_v<Type, T>)
      os << "'" << arg << "'";
    else
      os << arg;
  }

  std::optional<Location> loc_;
  StringRef opName_;
};

/// Checks that `index` is a dimension of a tensor of rank `rank`.
LogicalResult checkDimIndex(const Reporter &report, StringRef what, int64_t index, int64_t rank,
                            Type type) {
  if (index < 0 || index >= rank)
    return report.fail(what, " = ", index, " is out of range for ", type, " (rank ", rank, ")");
  return success();
}

RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// The short form `%a, %b : T` when every operand and the result have type T;
// otherwise the functional form `: (T1, T2) -> T3` (only invalid IR needs it).
ParseResult sinter::ir::parseElementwiseOp(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  Type type;
  if (parser.parseOperandList(operands) || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColon())
    return failure();
  SMLoc typeLoc = parser.getCurrentLocation();
  if (parser.parseType(type))
    return failure();
  if (auto function = dyn_cast<FunctionType>(type)) {
    result.addTypes(function.getResults());
    return parser.resolveOperands(operands, function.getInputs(), typeLoc, result.operands);
  }
  result.addTypes(type);
  return parser.resolveOperands(operands, type, result.operands);
}

void sinter::ir::printElementwiseOp(OpAsmPrinter &printer, Operation *op) {
  printer << ' ';
  printer.printOperands(op->getOperands());
  printer.printOptionalAttrDict(op->getAttrs());
  printer << " : ";
  Type resultType = op->getResult(0).getType();
  if (llvm::all_of(op->getOperandTypes(), [&](Type t) { return t == resultType; }))
    printer << resultType;
  else
    printer.printFunctionalType(op);
}

LogicalResult sinter::ir::verifyElementwiseOp(Operation *op) {
  Type resultType = op->getResult(0).getType();
  if (op->getNumOperands() == 2 && op->getOperand(0).getType() != op->getOperand(1).getType())
    return op->emitOpError() << "lhs has type " << op->getOperand(0).getType()
                             << " but rhs has type " << op->getOperand(1).getType()
                             << "; broadcast explicitly with sinter.broadcast_in_dim";
  if (op->getOperand(0).getType() != resultType)
    return op->emitOpError() << "result has type " << resultType << " but its operands have type "
                             << op->getOperand(0).getType();
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context, std::optional<Location>,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  inferred.push_back(tensorOf(lhs.getShape(), IntegerType::get(context, 1)));
  return success();
}

LogicalResult SelectOp::verify() {
  if (getPred().getType().getShape() != getResult().getType().getShape())
    return emitOpError() << "pred has shape " << shapeOf(getPred().getType())
                         << " but the values have shape " << shapeOf(getResult().getType());
  return success();
}

LogicalResult ConvertOp::verify() {
  if (getOperand().getType().getShape() != getResult().getType().getShape())
    return emitOpError() << "operand has shape " << shapeOf(getOperand().getType())
                         << " but the result has shape " << shapeOf(getResult().getType())
                         << "; sinter.convert changes only the element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Shape and layout
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType operandType = getOperand().getType(), resultType = getResult().getType();
  ArrayRef<int64_t> dims = getDims();
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError() << "operand element type " << operandType.getElementType()
                         << " differs from result element type " << resultType.getElementType();
  if (static_cast<int64_t>(dims.size()) != operandType.getRank())
    return emitOpError() << "dims has " << dims.size() << " entries but the operand " << operandType
                         << " has rank " << operandType.getRank();
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= resultType.getRank())
      return emitOpError() << "dims[" << i << "] = " << dim << " is out of range for the result "
                           << resultType << " (rank " << resultType.getRank() << ")";
    if (i > 0 && dims[i - 1] >= dim)
      return emitOpError() << "dims must be strictly increasing, got " << listStr(dims);
    int64_t from = operandType.getDimSize(i), to = resultType.getDimSize(dim);
    if (from != 1 && from != to)
      return emitOpError() << "operand dimension " << i << " of size " << from
                           << " cannot broadcast to result dimension " << dim << " of size " << to
                           << " (" << shapeOf(operandType) << " -> " << shapeOf(resultType) << ")";
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType operandType = getOperand().getType(), resultType = getResult().getType();
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError() << "operand element type " << operandType.getElementType()
                         << " differs from result element type " << resultType.getElementType();
  if (operandType.getNumElements() != resultType.getNumElements())
    return emitOpError() << "cannot reshape " << shapeOf(operandType) << " ("
                         << operandType.getNumElements() << " elements) to " << shapeOf(resultType)
                         << " (" << resultType.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Reporter report(location, getOperationName());
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != type.getRank())
    return report.fail("perm ", listStr(perm), " has ", perm.size(), " entries but the operand ",
                       type, " has rank ", type.getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= type.getRank() || seen[p])
      return report.fail("perm ", listStr(perm), " is not a permutation of 0..",
                         type.getRank() - 1);
    seen[p] = true;
    shape.push_back(type.getDimSize(p));
  }
  inferred.push_back(tensorOf(shape, type.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Reporter report(location, getOperationName());
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  ArrayRef<int64_t> start = adaptor.getStart(), limit = adaptor.getLimit(),
                    step = adaptor.getStep();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(start.size()) != rank || static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(step.size()) != rank)
    return report.fail("start ", listStr(start), ", limit ", listStr(limit), " and step ",
                       listStr(step), " must each have one entry per dimension of ", type);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (step[d] < 1)
      return report.fail("step[", d, "] = ", step[d], " must be at least 1");
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > type.getDimSize(d))
      return report.fail("dimension ", d, " of size ", type.getDimSize(d),
                         " cannot be sliced from ", start[d], " to ", limit[d],
                         " (need 0 <= start <= limit <= size)");
    shape.push_back((limit[d] - start[d] + step[d] - 1) / step[d]);
  }
  inferred.push_back(tensorOf(shape, type.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Reporter report(location, getOperationName());
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return report.fail("needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  int64_t dim = adaptor.getDim();
  if (failed(checkDimIndex(report, "dim", dim, first.getRank(), first)))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, input] : llvm::enumerate(inputs.drop_front())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getElementType() != first.getElementType() || type.getRank() != first.getRank())
      return report.fail("input #", i + 1, " has type ", type, " but input #0 has type ", first,
                         "; inputs need the same element type and rank");
    for (int64_t d = 0; d < first.getRank(); ++d)
      if (d != dim && type.getDimSize(d) != first.getDimSize(d))
        return report.fail("input #", i + 1, " has shape ", shapeOf(type),
                           " but input #0 has shape ", shapeOf(first),
                           "; they may differ only in dimension ", dim);
    shape[dim] += type.getDimSize(dim);
  }
  inferred.push_back(tensorOf(shape, first.getElementType()));
  return success();
}

// The shape sinter.gather gives, which is also the shape of scatter_add's
// updates: operand.shape[:axis] + indices.shape + operand.shape[axis+1:].
static FailureOr<SmallVector<int64_t>> gatheredShape(const Reporter &report,
                                                     RankedTensorType operand,
                                                     RankedTensorType indices, int64_t axis) {
  if (failed(checkDimIndex(report, "axis", axis, operand.getRank(), operand)))
    return failure();
  SmallVector<int64_t> shape(operand.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, operand.getShape().drop_front(axis + 1));
  return shape;
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Reporter report(location, getOperationName());
  auto operand = cast<RankedTensorType>(adaptor.getOperand().getType());
  FailureOr<SmallVector<int64_t>> shape = gatheredShape(
      report, operand, cast<RankedTensorType>(adaptor.getIndices().getType()), adaptor.getAxis());
  if (failed(shape))
    return failure();
  inferred.push_back(tensorOf(*shape, operand.getElementType()));
  return success();
}

LogicalResult ScatterAddOp::verify() {
  Reporter report(getLoc(), getOperationName());
  RankedTensorType operand = getOperand().getType(), updates = getUpdates().getType();
  FailureOr<SmallVector<int64_t>> expected =
      gatheredShape(report, operand, getIndices().getType(), getAxis());
  if (failed(expected))
    return failure();
  if (updates.getElementType() != operand.getElementType())
    return emitOpError() << "updates element type " << updates.getElementType()
                         << " differs from operand element type " << operand.getElementType();
  if (updates.getShape() != ArrayRef<int64_t>(*expected))
    return emitOpError() << "updates have shape " << shapeOf(updates) << " but operand "
                         << shapeOf(operand) << " with indices " << shapeOf(getIndices().getType())
                         << " along axis " << getAxis() << " needs " << listStr(*expected);
  return success();
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  Reporter report(getLoc(), getOperationName());
  RankedTensorType type = getResult().getType();
  return checkDimIndex(report, "dim", getDim(), type.getRank(), type);
}

LogicalResult RandomOp::verify() {
  if (static_cast<int64_t>(getStream()) < 0)
    return emitOpError() << "stream must be non-negative, got "
                         << static_cast<int64_t>(getStream());
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// The result type of a reduction over `dims` of `type`.
static LogicalResult inferReduction(const Reporter &report, RankedTensorType type,
                                    ArrayRef<int64_t> dims, bool keepdim, Type elementType,
                                    SmallVectorImpl<Type> &inferred) {
  llvm::SmallSet<int64_t, 4> reduced;
  for (int64_t dim : dims) {
    if (failed(checkDimIndex(report, "reduced dimension", dim, type.getRank(), type)))
      return failure();
    if (!reduced.insert(dim).second)
      return report.fail("dims ", listStr(dims), " name dimension ", dim, " twice");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!reduced.contains(d))
      shape.push_back(type.getDimSize(d));
    else if (keepdim)
      shape.push_back(1);
  }
  inferred.push_back(tensorOf(shape, elementType));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  return inferReduction(Reporter(location, getOperationName()), type, adaptor.getDims(),
                        adaptor.getKeepdim(), type.getElementType(), inferred);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  return inferReduction(Reporter(location, getOperationName()), type, adaptor.getDims(),
                        adaptor.getKeepdim(), type.getElementType(), inferred);
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  int64_t dim = adaptor.getDim();
  return inferReduction(Reporter(location, getOperationName()), type, ArrayRef<int64_t>(dim),
                        adaptor.getKeepdim(), IntegerType::get(context, 64), inferred);
}

//===----------------------------------------------------------------------===//
// Contractions and windows
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Reporter report(location, getOperationName());
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return report.fail("operands need rank 2 or more, got ", lhs, " and ", rhs);
  if (lhs.getElementType() != rhs.getElementType())
    return report.fail("lhs element type ", lhs.getElementType(), " differs from rhs element type ",
                       rhs.getElementType());
  ArrayRef<int64_t> lhsBatch = lhs.getShape().drop_back(2), rhsBatch = rhs.getShape().drop_back(2);
  if (rhs.getRank() != 2 && lhsBatch != rhsBatch)
    return report.fail("batch dimensions differ: lhs ", shapeOf(lhs), " has ", listStr(lhsBatch),
                       ", rhs ", shapeOf(rhs), " has ", listStr(rhsBatch),
                       " (rhs may also be a plain matrix)");
  int64_t m = lhs.getDimSize(lhs.getRank() - 2), lhsK = lhs.getDimSize(lhs.getRank() - 1);
  int64_t rhsK = rhs.getDimSize(rhs.getRank() - 2), n = rhs.getDimSize(rhs.getRank() - 1);
  if (adaptor.getTransposeLhs())
    std::swap(m, lhsK);
  if (adaptor.getTransposeRhs())
    std::swap(rhsK, n);
  if (lhsK != rhsK)
    return report.fail("lhs ", shapeOf(lhs), (adaptor.getTransposeLhs() ? " (transposed)" : ""),
                       " has ", lhsK, " columns but rhs ", shapeOf(rhs),
                       (adaptor.getTransposeRhs() ? " (transposed)" : ""), " has ", rhsK, " rows");
  SmallVector<int64_t> shape(lhsBatch);
  shape.push_back(m);
  shape.push_back(n);
  inferred.push_back(tensorOf(shape, lhs.getElementType()));
  return success();
}

namespace {
/// The attributes shared by the conv2d ops.
struct ConvParams {
  ArrayRef<int64_t> stride, padding, dilation;
  int64_t groups;
};
} // namespace

// The result shape of conv2d(input, filter), or failure with the broken rule.
static FailureOr<SmallVector<int64_t>> convOutputShape(const Reporter &report,
                                                       RankedTensorType input,
                                                       RankedTensorType filter,
                                                       const ConvParams &params) {
  if (input.getRank() != 4 || filter.getRank() != 4)
    return report.fail("needs a rank-4 NCHW input and OIHW filter, got ", input, " and ", filter);
  if (input.getElementType() != filter.getElementType())
    return report.fail("input element type ", input.getElementType(),
                       " differs from filter element type ", filter.getElementType());
  for (auto [name, values, least] :
       {std::tuple{"stride", params.stride, 1}, std::tuple{"padding", params.padding, 0},
        std::tuple{"dilation", params.dilation, 1}}) {
    if (values.size() != 2)
      return report.fail(name, " ", listStr(values), " needs 2 entries [h, w]");
    if (values[0] < least || values[1] < least)
      return report.fail(name, " ", listStr(values), " entries must be at least ", least);
  }
  int64_t n = input.getDimSize(0), c = input.getDimSize(1), o = filter.getDimSize(0);
  if (params.groups < 1 || c % params.groups != 0 || o % params.groups != 0)
    return report.fail("groups = ", params.groups, " must be at least 1 and divide both the ", c,
                       " input channels and the ", o, " output channels");
  if (filter.getDimSize(1) * params.groups != c)
    return report.fail("input ", shapeOf(input), " has ", c, " channels but filter ",
                       shapeOf(filter), " expects ", filter.getDimSize(1), " x ", params.groups,
                       " group(s) = ", filter.getDimSize(1) * params.groups);
  SmallVector<int64_t> shape = {n, o};
  for (int d = 0; d < 2; ++d) {
    int64_t size = input.getDimSize(2 + d), kernel = filter.getDimSize(2 + d);
    int64_t padded = size + 2 * params.padding[d], span = params.dilation[d] * (kernel - 1) + 1;
    if (span > padded)
      return report.fail("the ", (d == 0 ? "height" : "width"), " of the dilated kernel (", span,
                         ") exceeds the padded input (", padded, ") for input ", shapeOf(input),
                         " and filter ", shapeOf(filter));
    shape.push_back((padded - span) / params.stride[d] + 1);
  }
  return shape;
}

template <typename ConvOp> static ConvParams convParams(ConvOp op) {
  return {op.getStride(), op.getPadding(), op.getDilation(), static_cast<int64_t>(op.getGroups())};
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  FailureOr<SmallVector<int64_t>> shape =
      convOutputShape(Reporter(location, getOperationName()), input,
                      cast<RankedTensorType>(adaptor.getFilter().getType()), convParams(adaptor));
  if (failed(shape))
    return failure();
  inferred.push_back(tensorOf(*shape, input.getElementType()));
  return success();
}

// Checks that the forward conv2d of `input` and `filter` gives `gradOutput`.
static LogicalResult verifyConvGradient(Operation *op, const Reporter &report,
                                        RankedTensorType input, RankedTensorType filter,
                                        RankedTensorType gradOutput, const ConvParams &params) {
  FailureOr<SmallVector<int64_t>> shape = convOutputShape(report, input, filter, params);
  if (failed(shape))
    return failure();
  if (gradOutput.getShape() != ArrayRef<int64_t>(*shape) ||
      gradOutput.getElementType() != input.getElementType())
    return op->emitOpError() << "conv2d of input " << shapeOf(input) << " with filter "
                             << shapeOf(filter) << " gives " << listStr(*shape) << " of "
                             << input.getElementType() << ", but grad_output is " << gradOutput;
  return success();
}

LogicalResult Conv2dBackwardInputOp::verify() {
  return verifyConvGradient(*this, Reporter(getLoc(), getOperationName()), getResult().getType(),
                            getFilter().getType(), getGradOutput().getType(), convParams(*this));
}

LogicalResult Conv2dBackwardFilterOp::verify() {
  return verifyConvGradient(*this, Reporter(getLoc(), getOperationName()), getInput().getType(),
                            getResult().getType(), getGradOutput().getType(), convParams(*this));
}

// The result shape of pool2d over `input`, or failure with the broken rule.
static FailureOr<SmallVector<int64_t>>
poolOutputShape(const Reporter &report, RankedTensorType input, ArrayRef<int64_t> kernel,
                ArrayRef<int64_t> stride, ArrayRef<int64_t> padding) {
  if (input.getRank() != 4)
    return report.fail("needs a rank-4 NCHW input, got ", input);
  for (auto [name, values, least] :
       {std::tuple{"kernel", kernel, 1}, std::tuple{"stride", stride, 1},
        std::tuple{"padding", padding, 0}}) {
    if (values.size() != 2)
      return report.fail(name, " ", listStr(values), " needs 2 entries [h, w]");
    if (values[0] < least || values[1] < least)
      return report.fail(name, " ", listStr(values), " entries must be at least ", least);
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), input.getDimSize(1)};
  for (int d = 0; d < 2; ++d) {
    if (2 * padding[d] > kernel[d])
      return report.fail("padding ", listStr(padding), " must be at most half of kernel ",
                         listStr(kernel));
    int64_t padded = input.getDimSize(2 + d) + 2 * padding[d];
    if (kernel[d] > padded)
      return report.fail("kernel ", listStr(kernel), " is larger than the padded input ",
                         shapeOf(input));
    shape.push_back((padded - kernel[d]) / stride[d] + 1);
  }
  return shape;
}

LogicalResult Pool2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  FailureOr<SmallVector<int64_t>> shape =
      poolOutputShape(Reporter(location, getOperationName()), input, adaptor.getKernel(),
                      adaptor.getStride(), adaptor.getPadding());
  if (failed(shape))
    return failure();
  inferred.push_back(tensorOf(*shape, input.getElementType()));
  return success();
}

LogicalResult Pool2dBackwardOp::verify() {
  RankedTensorType input = getInput().getType(), gradOutput = getGradOutput().getType();
  FailureOr<SmallVector<int64_t>> shape = poolOutputShape(
      Reporter(getLoc(), getOperationName()), input, getKernel(), getStride(), getPadding());
  if (failed(shape))
    return failure();
  if (gradOutput.getShape() != ArrayRef<int64_t>(*shape) ||
      gradOutput.getElementType() != input.getElementType())
    return emitOpError() << "pool2d of input " << shapeOf(input) << " gives " << listStr(*shape)
                         << " of " << input.getElementType() << ", but grad_output is "
                         << gradOutput;
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives and fusion
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>, Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, adaptor.getInputs().getTypes());
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one tensor to reduce";
  return success();
}

/// A collective over `ranks` ranks of a 1-D tensor whose length becomes
/// `length(n)`: ReduceScatterOp n / ranks, AllGatherOp n * ranks.
template <typename Length>
static LogicalResult inferShardedType(std::optional<Location> location, Type input, int64_t ranks,
                                      StringRef what, Length length,
                                      SmallVectorImpl<Type> &inferred) {
  auto type = dyn_cast<RankedTensorType>(input);
  if (!type || type.getRank() != 1 || ranks < 1 ||
      (what == "reduce_scatter" && type.getDimSize(0) % ranks != 0))
    return emitOptionalError(location, "sinter.", what,
                             " needs a 1-D tensor whose length the number of ranks (", ranks,
                             ") divides, got ", input);
  inferred.push_back(RankedTensorType::get({length(type.getDimSize(0))}, type.getElementType()));
  return success();
}

LogicalResult ReduceScatterOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  int64_t ranks = adaptor.getRanks();
  return inferShardedType(
      location, adaptor.getInput().getType(), ranks, "reduce_scatter",
      [ranks](int64_t n) { return n / ranks; }, inferred);
}

LogicalResult AllGatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  int64_t ranks = adaptor.getRanks();
  return inferShardedType(
      location, adaptor.getInput().getType(), ranks, "all_gather",
      [ranks](int64_t n) { return n * ranks; }, inferred);
}

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments but the fusion has " << getInputs().size() << " inputs";
  for (auto [i, input, arg] : llvm::enumerate(getInputs(), body.getArguments()))
    if (input.getType() != arg.getType())
      return emitOpError() << "input #" << i << " has type " << input.getType()
                           << " but body argument #" << i << " has type " << arg.getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with sinter.yield";
  if (yield.getValues().size() != getNumResults())
    return emitOpError() << "body yields " << yield.getValues().size()
                         << " values but the fusion has " << getNumResults() << " results";
  for (auto [i, value, result] : llvm::enumerate(yield.getValues(), getResults()))
    if (value.getType() != result.getType())
      return emitOpError() << "result #" << i << " has type " << result.getType()
                           << " but the body yields " << value.getType();
  return success();
}

#define GET_OP_CLASSES
#include "sinter/Dialect/Sinter/SinterOps.cpp.inc"
