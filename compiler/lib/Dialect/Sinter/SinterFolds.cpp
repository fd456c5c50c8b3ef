//===- SinterFolds.cpp - folders and canonicalization of sinter ops ------===//
//
// Folds remove what the lazy-tensor recorder leaves behind: identity reshapes,
// transposes and broadcasts, adds of zero and multiplies by one, and chains
// of layout ops. They never change results, except that `x + 0` folds to `x`
// also for x = -0.0 (as XLA and PyTorch's compilers do).
//
//===----------------------------------------------------------------------===//
#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/BitVector.h"

using namespace mlir;
using namespace sinter::ir;

namespace {

/// Whether `attr` is a constant tensor whose elements all equal `value`.
bool isSplatOf(Attribute attr, int64_t value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isExactlyValue(static_cast<double>(value));
  if (dense.getElementType().isInteger(1))
    return false;
  return dense.getSplatValue<APInt>().getSExtValue() == value;
}

/// Folds a binary op on two constants with `floatFn` or `intFn` (either may be
/// null to leave that element kind alone).
Attribute foldConstants(ArrayRef<Attribute> operands, Type resultType,
                        function_ref<APFloat(const APFloat &, const APFloat &)> floatFn,
                        function_ref<APInt(const APInt &, const APInt &)> intFn) {
  Type elementType = cast<ShapedType>(resultType).getElementType();
  if (isa<FloatType>(elementType) && floatFn)
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        operands, resultType, [&](const APFloat &a, const APFloat &b) { return floatFn(a, b); });
  if (isa<IntegerType>(elementType) && intFn)
    return constFoldBinaryOp<IntegerAttr, APInt, void>(
        operands, resultType, [&](const APInt &a, const APInt &b) { return intFn(a, b); });
  return {};
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getOperand().getDefiningOp<NegOp>())
    return inner.getOperand();
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 0))
    return getRhs();
  return foldConstants(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a + b; },
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    return getLhs();
  return foldConstants(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a - b; },
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 1))
    return getRhs();
  return foldConstants(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a * b; },
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    return getLhs();
  // Integer division by zero has no value to fold to; floats give inf or NaN.
  return foldConstants(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a / b; },
      nullptr);
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return getOnTrue();
  auto pred = dyn_cast_or_null<DenseElementsAttr>(adaptor.getPred());
  if (pred && pred.isSplat())
    return pred.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  return {};
}

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  // Same type means same rank, so the strictly increasing dims are 0..rank-1.
  if (getOperand().getType() == getType())
    return getOperand();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand());
      dense && dense.isSplat())
    return SplatElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    return dense.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())))
    return getOperand();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand());
      dense && dense.isSplat())
    return SplatElementsAttr::get(getType(), dense.getSplatValue<Attribute>());
  return {};
}

namespace {
/// transpose(transpose(x, p), q) -> transpose(x, p o q); the identity
/// permutation then folds away.
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getOperand().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, inner.getOperand(), perm);
    return success();
  }
};
} // namespace

namespace {
/// transpose(matmul(a, b)) swapping the last two dimensions, of a matmul
/// used only there, with operands of one rank -> matmul(b, a) with both
/// transpose flags flipped: (op(A) op(B))^T = op(B)^T op(A)^T. A weight's
/// gradient is then computed in the weight's layout instead of copied into
/// it.
struct FoldTransposeOfMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto matmul = op.getOperand().getDefiningOp<MatmulOp>();
    ArrayRef<int64_t> perm = op.getPerm();
    int64_t rank = static_cast<int64_t>(perm.size());
    if (!matmul || !matmul->hasOneUse() || rank < 2 || perm[rank - 1] != rank - 2 ||
        perm[rank - 2] != rank - 1)
      return failure();
    for (int64_t d = 0; d < rank - 2; ++d)
      if (perm[d] != d)
        return failure();
    auto lhsType = cast<ShapedType>(matmul.getLhs().getType());
    auto rhsType = cast<ShapedType>(matmul.getRhs().getType());
    if (lhsType.getRank() != rhsType.getRank())
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(op, matmul.getRhs(), matmul.getLhs(),
                                          !matmul.getTransposeRhs(), !matmul.getTransposeLhs());
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ComposeTransposes, FoldTransposeOfMatmul>(context);
}

namespace {
/// pow(x, c) with c a splat 2 or 3 -> x * x (* x): a multiplication instead
/// of a library call per element (GELU's cube).
struct PowByConstant : OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PowOp op, PatternRewriter &rewriter) const override {
    DenseElementsAttr exponent;
    if (!matchPattern(op.getRhs(), m_Constant(&exponent)) || !exponent.isSplat())
      return failure();
    double c = exponent.getSplatValue<APFloat>().convertToDouble();
    if (c != 2.0 && c != 3.0)
      return failure();
    Value x = op.getLhs();
    Value square = rewriter.create<MulOp>(op.getLoc(), op.getType(), x, x);
    rewriter.replaceOp(op, c == 2.0 ? square
                                    : rewriter.create<MulOp>(op.getLoc(), op.getType(), square, x));
    return success();
  }
};
} // namespace

void PowOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<PowByConstant>(context);
}

namespace {
/// matmul(transpose(a), b) where the transpose swaps only the last two
/// dimensions -> matmul(a, b) with the operand's transpose flag flipped: the
/// library reads the operand transposed, so no copy is made.
struct FoldTransposeIntoMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool swapsLastTwo(ArrayRef<int64_t> perm) {
    int64_t rank = static_cast<int64_t>(perm.size());
    if (rank < 2 || perm[rank - 1] != rank - 2 || perm[rank - 2] != rank - 1)
      return false;
    for (int64_t d = 0; d < rank - 2; ++d)
      if (perm[d] != d)
        return false;
    return true;
  }

  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<TransposeOp>();
    auto rhs = op.getRhs().getDefiningOp<TransposeOp>();
    bool foldLhs = lhs && swapsLastTwo(lhs.getPerm());
    bool foldRhs = rhs && swapsLastTwo(rhs.getPerm());
    if (!foldLhs && !foldRhs)
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(
        op, foldLhs ? lhs.getOperand() : op.getLhs(), foldRhs ? rhs.getOperand() : op.getRhs(),
        op.getTransposeLhs() != foldLhs, op.getTransposeRhs() != foldRhs);
    return success();
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<FoldTransposeIntoMatmul>(context);
}

namespace {
/// add(concat(a...), concat(b...)) along one dim -> concat of the sums of
/// their pieces, cut at the union of both concats' boundaries. The gradient
/// of a slice is a concat of zeros around it, so the gradients of slices
/// that tile a tensor (the query, key and value parts of one projection)
/// summed become one concat of the parts once the adds of zeros fold away,
/// instead of a tensor-sized concat per part and their sums. Only splat
/// constants are cut: where a boundary falls inside another piece, the
/// pattern does not apply.
struct AddOfConcats : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  static SmallVector<int64_t> boundaries(ConcatOp concat) {
    SmallVector<int64_t> at = {0};
    for (Value input : concat.getInputs())
      at.push_back(at.back() + cast<ShapedType>(input.getType()).getDimSize(concat.getDim()));
    return at;
  }

  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<ConcatOp>();
    auto rhs = op.getRhs().getDefiningOp<ConcatOp>();
    if (!lhs || !rhs || lhs.getDim() != rhs.getDim())
      return failure();
    int64_t dim = lhs.getDim();
    SmallVector<int64_t> lhsAt = boundaries(lhs), rhsAt = boundaries(rhs);
    SmallVector<int64_t> cuts(lhsAt);
    cuts.append(rhsAt.begin(), rhsAt.end());
    llvm::sort(cuts);
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // The piece of `concat` over [from, to): an input, or a part of a splat
    // (made only when `make`); null where neither.
    auto piece = [&](ConcatOp concat, ArrayRef<int64_t> at, int64_t from, int64_t to,
                     bool make) -> Value {
      size_t k = std::upper_bound(at.begin(), at.end(), from) - at.begin() - 1;
      Value input = concat.getInputs()[k];
      if (at[k] == from && at[k + 1] == to)
        return input;
      DenseElementsAttr splat;
      if (!matchPattern(input, m_Constant(&splat)) || !splat.isSplat())
        return {};
      if (!make)
        return input;
      auto type = cast<RankedTensorType>(input.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[dim] = to - from;
      return rewriter.create<ConstantOp>(op.getLoc(), splat.resizeSplat(type.clone(shape)));
    };
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      if (!piece(lhs, lhsAt, cuts[i], cuts[i + 1], false) ||
          !piece(rhs, rhsAt, cuts[i], cuts[i + 1], false))
        return failure();
    SmallVector<Value> sums;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      Value a = piece(lhs, lhsAt, cuts[i], cuts[i + 1], true),
            b = piece(rhs, rhsAt, cuts[i], cuts[i + 1], true);
      sums.push_back(rewriter.create<AddOp>(op.getLoc(), a.getType(), a, b));
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), sums, dim);
    return success();
  }
};
} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<AddOfConcats>(context);
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor) {
  if (getDims().empty())
    return getOperand();
  return {};
}

OpFoldResult ReduceMaxOp::fold(FoldAdaptor) {
  if (getDims().empty())
    return getOperand();
  return {};
}

namespace {
/// A fusion over `op`'s inputs yielding `values` (computed in `op`'s body,
/// which moves into it); the caller replaces `op`'s uses.
FusionOp withYields(PatternRewriter &rewriter, FusionOp op, ArrayRef<Value> values) {
  SmallVector<Type> types;
  for (Value v : values)
    types.push_back(v.getType());
  Operation *yield = op.getBody().front().getTerminator();
  auto fusion = rewriter.create<FusionOp>(op.getLoc(), types, op.getInputs());
  rewriter.inlineRegionBefore(op.getBody(), fusion.getBody(), fusion.getBody().end());
  rewriter.setInsertionPoint(yield);
  rewriter.replaceOpWithNewOp<YieldOp>(yield, values);
  return fusion;
}

/// Drops the results of a fusion that nothing reads, and forwards a result
/// that is one of the fusion's inputs yielded unchanged: a kernel then
/// writes only what is read.
struct PruneFusionResults : OpRewritePattern<FusionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusionOp op, PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    bool changed = false;
    for (auto [result, value] : llvm::zip(op.getResults(), yield.getValues()))
      if (auto arg = dyn_cast<BlockArgument>(value); arg && !result.use_empty()) {
        rewriter.replaceAllUsesWith(result, op.getInputs()[arg.getArgNumber()]);
        changed = true;
      }
    SmallVector<Value> kept;
    SmallVector<unsigned> keptIndex;
    for (auto [k, result] : llvm::enumerate(op.getResults()))
      if (!result.use_empty()) {
        kept.push_back(yield.getValues()[k]);
        keptIndex.push_back(static_cast<unsigned>(k));
      }
    if (kept.size() == op.getNumResults())
      return success(changed);
    if (kept.empty()) {
      rewriter.eraseOp(op);
      return success();
    }
    FusionOp fused = withYields(rewriter, op, kept);
    for (auto [k, index] : llvm::enumerate(keptIndex))
      rewriter.replaceAllUsesWith(op.getResult(index), fused.getResult(k));
    rewriter.eraseOp(op);
    return success();
  }
};

/// Drops the inputs a fusion's body no longer reads (after its results were
/// pruned), so that the kernel neither takes nor keeps them alive, and reads
/// a value yielded twice from its first result.
struct PruneFusionInputs : OpRewritePattern<FusionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusionOp op, PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    bool changed = false;
    for (auto [k, value] : llvm::enumerate(yield.getValues())) {
      auto first = llvm::find(yield.getValues(), value);
      unsigned j = static_cast<unsigned>(first - yield.getValues().begin());
      if (j < k && !op.getResult(k).use_empty()) {
        rewriter.replaceAllUsesWith(op.getResult(k), op.getResult(j));
        changed = true;
      }
    }
    // What computed a pruned result is dead: it reads no input any more.
    for (Operation *inner = yield->getPrevNode(), *before = nullptr; inner; inner = before) {
      before = inner->getPrevNode();
      if (isOpTriviallyDead(inner)) {
        rewriter.eraseOp(inner);
        changed = true;
      }
    }
    llvm::BitVector unused(body.getNumArguments());
    for (BlockArgument arg : body.getArguments())
      if (arg.use_empty())
        unused.set(arg.getArgNumber());
    if (unused.none())
      return success(changed);
    SmallVector<Value> inputs;
    for (auto [i, input] : llvm::enumerate(op.getInputs()))
      if (!unused.test(i))
        inputs.push_back(input);
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperands(inputs);
      body.eraseArguments(unused);
    });
    return success();
  }
};

/// Moves a reshape that a fusion yields out of it: the kernel writes the
/// reshape's operand and a reshape outside, which the runtime treats as a
/// view of the same buffer, gives the consumers their shape. A fusion that
/// yielded both a value and its reshape (a gradient read by two matmuls in
/// two shapes) then writes it once: one buffer instead of two copies.
struct ReshapeFusionResultsOutside : OpRewritePattern<FusionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusionOp op, PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> values(yield.getValues());
    // Per result: -1 unchanged; otherwise the result (or, for a block
    // argument, the input) whose reshape replaces it.
    SmallVector<std::pair<int, bool>> source(values.size(), {-1, false});
    bool any = false, retype = false;
    for (auto [k, value] : llvm::enumerate(yield.getValues())) {
      auto reshape = value.getDefiningOp<ReshapeOp>();
      if (!reshape || op.getResult(k).use_empty())
        continue;
      Value from = reshape.getOperand();
      any = true;
      if (auto arg = dyn_cast<BlockArgument>(from); arg && arg.getOwner() == &body) {
        source[k] = {static_cast<int>(arg.getArgNumber()), true};
        continue;
      }
      auto same = llvm::find(values, from);
      if (same != values.end()) {
        source[k] = {static_cast<int>(same - values.begin()), false};
        continue;
      }
      values[k] = from; // the kernel writes the operand; the reshape is outside
      source[k] = {static_cast<int>(k), false};
      retype = true;
    }
    if (!any)
      return failure();
    FusionOp fusion = op;
    if (retype) {
      fusion = withYields(rewriter, op, values);
    }
    rewriter.setInsertionPointAfter(fusion);
    for (auto [k, from] : llvm::enumerate(source)) {
      Value old = op.getResult(k);
      if (from.first < 0) {
        if (fusion != op)
          rewriter.replaceAllUsesWith(old, fusion.getResult(k));
        continue;
      }
      Value base = from.second ? fusion.getInputs()[from.first] : fusion.getResult(from.first);
      Value view = rewriter.create<ReshapeOp>(op.getLoc(), old.getType(), base);
      rewriter.replaceAllUsesWith(old, view);
    }
    if (fusion != op)
      rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

int64_t sinter::ir::contiguousOffset(SliceOp slice) {
  ArrayRef<int64_t> shape = cast<ShapedType>(slice.getOperand().getType()).getShape();
  ArrayRef<int64_t> start = slice.getStart(), limit = slice.getLimit(), step = slice.getStep();
  int64_t rank = static_cast<int64_t>(shape.size()), partial = rank;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (step[d] != 1)
      return -1;
  for (int64_t d = 0; d < rank; ++d)
    if (limit[d] - start[d] != shape[d]) {
      partial = d;
      break;
    }
  for (int64_t d = partial + 1; d < rank; ++d)
    if (start[d] != 0 || limit[d] != shape[d])
      return -1;
  for (int64_t d = 0; d < partial; ++d)
    if (limit[d] - start[d] != 1 && shape[d] != 1)
      return -1; // whole leading dims before a partial one: not contiguous
  int64_t offset = 0, stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    offset += start[d] * stride;
    stride *= shape[d];
  }
  return offset;
}

namespace {

/// Moves a contiguous slice of an input that a fusion yields out of it (a
/// weight split into its query, key and value parts): a slice outside any
/// fusion is a view at an offset in its operand's buffer, no copy. Only when
/// every reader is a kernel (a returned value needs its own buffer).
struct SliceFusionResultsOutside : OpRewritePattern<FusionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusionOp op, PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    bool changed = false;
    for (auto [k, value] : llvm::enumerate(yield.getValues())) {
      auto slice = value.getDefiningOp<SliceOp>();
      Value result = op.getResult(k);
      auto arg = slice ? dyn_cast<BlockArgument>(slice.getOperand()) : BlockArgument();
      if (!arg || arg.getOwner() != &body || result.use_empty() || contiguousOffset(slice) < 0 ||
          llvm::any_of(result.getUsers(), [](Operation *user) {
            return user->hasTrait<OpTrait::IsTerminator>() || isa<ReshapeOp, SliceOp>(user);
          }))
        continue;
      rewriter.setInsertionPointAfter(op);
      auto view = rewriter.create<SliceOp>(slice.getLoc(), result.getType(),
                                           op.getInputs()[arg.getArgNumber()], slice.getStartAttr(),
                                           slice.getLimitAttr(), slice.getStepAttr());
      rewriter.replaceAllUsesWith(result, view.getResult());
      changed = true;
    }
    return success(changed);
  }
};

/// Moves a broadcast that a fusion yields into the fusions that read it: the
/// kernel writes the small value (or nothing, for one of its inputs) and
/// each reader broadcasts it while reading, as it would any small input. A
/// batch norm's per-channel scale, broadcast to the activation's size and
/// kept for the backward pass, then costs a channel's worth of bytes, not
/// an activation's. Only when every reader is a fusion (a library call
/// needs the full tensor in memory).
struct BroadcastFusionResultsIntoReaders : OpRewritePattern<FusionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusionOp op, PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    for (auto [k, value] : llvm::enumerate(yield.getValues())) {
      auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
      Value result = op.getResult(k);
      if (!broadcast || result.use_empty() ||
          !llvm::all_of(result.getUsers(), [](Operation *user) { return isa<FusionOp>(user); }))
        continue;
      Value small = broadcast.getOperand();
      Value outside;
      if (auto arg = dyn_cast<BlockArgument>(small); arg && arg.getOwner() == &body) {
        outside = op.getInputs()[arg.getArgNumber()];
      } else {
        // Yield the small value instead: a fusion with that result's type.
        SmallVector<Value> values(yield.getValues());
        values[k] = small;
        FusionOp fusion = withYields(rewriter, op, values);
        for (unsigned r = 0; r < op.getNumResults(); ++r)
          if (r != k)
            rewriter.replaceAllUsesWith(op.getResult(r), fusion.getResult(r));
        outside = fusion.getResult(k);
      }
      // Each reader takes the small value and broadcasts it inside.
      auto type = cast<RankedTensorType>(result.getType());
      llvm::ArrayRef<int64_t> dims = broadcast.getDims();
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        auto reader = cast<FusionOp>(use.getOwner());
        BlockArgument arg = reader.getBody().front().getArgument(use.getOperandNumber());
        rewriter.modifyOpInPlace(reader, [&] {
          use.set(outside);
          arg.setType(small.getType());
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToStart(&reader.getBody().front());
          auto wide = rewriter.create<BroadcastInDimOp>(broadcast.getLoc(), type, arg,
                                                        rewriter.getDenseI64ArrayAttr(dims));
          arg.replaceAllUsesExcept(wide.getResult(), wide);
        });
      }
      if (op->use_empty()) // retyped: the old fusion is read no more
        rewriter.eraseOp(op);
      return success();
    }
    return failure();
  }
};
} // namespace

void FusionOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<PruneFusionResults, PruneFusionInputs, ReshapeFusionResultsOutside,
               SliceFusionResultsOutside, BroadcastFusionResultsIntoReaders>(context);
}
