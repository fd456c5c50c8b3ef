//===- Primitives.cpp - recording the dialect's ops, with their gradients -===//
#include "Primitives.h"
#include "sinter/Error.h"
#include "sinter/Session.h"

#include <cmath>
#include <numbers>
#include <numeric>

namespace sinter::prim {
namespace {

using lazy::Op;

Tensor rec(Op op, lazy::Attrs attrs, std::initializer_list<const Tensor *> inputs, Shape shape,
           DType dtype, Loc loc) {
  std::vector<lazy::NodePtr> operands;
  operands.reserve(inputs.size());
  for (const Tensor *input : inputs)
    operands.push_back(detail::nodeOf(*input));
  // The first operand's device, from the node just read (one lock, not two).
  Device device = operands.empty() ? Session::current(loc).device() : operands.front()->device;
  return detail::record(op, std::move(attrs), std::move(operands), std::move(shape), dtype, device,
                        loc);
}

Tensor rec(Op op, lazy::Attrs attrs, const std::vector<Tensor> &inputs, Shape shape, DType dtype,
           Loc loc) {
  std::vector<lazy::NodePtr> operands;
  operands.reserve(inputs.size());
  for (const Tensor &input : inputs)
    operands.push_back(detail::nodeOf(input));
  // The first operand's device, from the node just read (one lock, not two).
  Device device = operands.empty() ? Session::current(loc).device() : operands.front()->device;
  return detail::record(op, std::move(attrs), std::move(operands), std::move(shape), dtype, device,
                        loc);
}

/// A constant on `device`: the device of the tensor it is combined with.
Tensor fullOf(const Shape &shape, DType dtype, double value, Device device, Loc loc) {
  lazy::Attrs attrs;
  attrs.value = value;
  return detail::record(Op::Full, std::move(attrs), {}, shape, dtype, device, loc);
}

Tensor mul(const Tensor &a, const Tensor &b, Loc loc) { return binary(Op::Mul, a, b, loc); }
Tensor sub(const Tensor &a, const Tensor &b, Loc loc) { return binary(Op::Sub, a, b, loc); }
Tensor div(const Tensor &a, const Tensor &b, Loc loc) { return binary(Op::Div, a, b, loc); }
Tensor scale(const Tensor &a, double c, Loc loc) { return mul(a, fullLike(a, c, loc), loc); }
Tensor choose(const Tensor &pred, const Tensor &a, const Tensor &b, Loc loc) {
  return select(pred, a, b, loc);
}
Tensor zerosLike(const Tensor &x, Loc loc) { return fullLike(x, 0.0, loc); }
Tensor neg(const Tensor &x, Loc loc) { return unary(Op::Neg, x, loc); }

// The gradients the op table's rows name (Note [The op table] in
// sinter/lazy/Ops.def) where one expression would not read well.

Tensor absGradient(const Tensor &g, const Tensor &x, Loc loc) {
  Tensor zero = zerosLike(x, loc);
  return choose(compare(lazy::CompareKind::gt, x, zero, loc), g,
                choose(compare(lazy::CompareKind::lt, x, zero, loc), neg(g, loc), zero, loc), loc);
}

/// The gradient of `a` in max(a, b) (wins: gt) or min(a, b) (wins: lt):
/// ties split it evenly, as PyTorch's maximum and minimum do.
Tensor pickGradient(lazy::CompareKind wins, const Tensor &g, const Tensor &a, const Tensor &b,
                    Loc loc) {
  Tensor zero = zerosLike(g, loc), half = scale(g, 0.5, loc);
  Tensor tie = compare(lazy::CompareKind::eq, a, b, loc);
  return choose(compare(wins, a, b, loc), g, choose(tie, half, zero, loc), loc);
}

// As PyTorch's pow_backward: no gradient for the base where the exponent is
// 0 (0 * inf otherwise), none for the exponent where the base is 0 and the
// exponent >= 0 (0 * log 0).

Tensor powBaseGradient(const Tensor &g, const Tensor &a, const Tensor &b, Loc loc) {
  Tensor zero = zerosLike(g, loc);
  Tensor baseGrad =
      mul(g, mul(b, binary(Op::Pow, a, sub(b, fullLike(b, 1.0, loc), loc), loc), loc), loc);
  return choose(compare(lazy::CompareKind::eq, b, zero, loc), zero, baseGrad, loc);
}

Tensor powExponentGradient(const Tensor &g, const Tensor &a, const Tensor &b, const Tensor &y,
                           Loc loc) {
  Tensor zero = zerosLike(g, loc);
  Tensor expGrad = mul(g, mul(y, unary(Op::Log, a, loc), loc), loc);
  Tensor flatBase = binary(Op::And, compare(lazy::CompareKind::eq, a, zero, loc),
                           compare(lazy::CompareKind::ge, b, zero, loc), loc);
  return choose(flatBase, zero, expGrad, loc);
}

/// The gradient of a broadcast back to its operand's shape: sums over every
/// result dimension the operand did not have or had with size 1.
Tensor unbroadcast(const Tensor &g, const Shape &operandShape, const std::vector<int64_t> &dims,
                   Loc loc) {
  std::vector<bool> kept(g.dim(), false);
  for (size_t i = 0; i < dims.size(); ++i)
    if (operandShape[i] == g.shape()[dims[i]])
      kept[dims[i]] = true;
  std::vector<int64_t> summed;
  for (int64_t d = 0; d < g.dim(); ++d)
    if (!kept[d])
      summed.push_back(d);
  Tensor reduced = summed.empty() ? g : reduceSum(g, summed, false, loc);
  return reduced.shape() == operandShape ? reduced : prim::reshape(reduced, operandShape, loc);
}

/// `g` placed back at the positions a slice took from a tensor of `shape`,
/// zeros elsewhere.
Tensor unslice(Tensor g, const Shape &shape, const std::vector<int64_t> &start,
               const std::vector<int64_t> &step, Loc loc) {
  for (int64_t d = 0; d < g.dim(); ++d) {
    int64_t taken = g.shape()[d];
    if (taken == shape[d])
      continue;
    if (step[d] > 1 && taken > 0) {
      // Interleave step - 1 zeros after each element: [m] -> [m, step] -> [m * step].
      Shape wide = g.shape();
      wide.insert(wide.begin() + d + 1, 1);
      Tensor column = prim::reshape(g, wide, loc);
      Shape gapShape = wide;
      gapShape[d + 1] = step[d] - 1;
      Tensor spread =
          concat({column, fullOf(gapShape, g.dtype(), 0.0, g.device(), loc)}, d + 1, loc);
      Shape flat = g.shape();
      flat[d] = taken * step[d];
      g = prim::reshape(spread, flat, loc);
      int64_t span = std::min(flat[d], shape[d] - start[d]);
      std::vector<int64_t> from(g.dim(), 0), to = g.shape(), unit(g.dim(), 1);
      to[d] = span;
      g = slice(g, from, to, unit, loc);
    }
    std::vector<Tensor> parts;
    Shape before = g.shape(), after = g.shape();
    before[d] = start[d];
    after[d] = shape[d] - start[d] - g.shape()[d];
    if (before[d] > 0)
      parts.push_back(fullOf(before, g.dtype(), 0.0, g.device(), loc));
    parts.push_back(g);
    if (after[d] > 0)
      parts.push_back(fullOf(after, g.dtype(), 0.0, g.device(), loc));
    g = parts.size() == 1 ? g : concat(parts, d, loc);
  }
  return g;
}

Shape keepdimShape(const Shape &shape, const std::vector<int64_t> &dims) {
  Shape kept = shape;
  for (int64_t d : dims)
    kept[d] = 1;
  return kept;
}

Shape reducedShape(const Shape &shape, const std::vector<int64_t> &dims, bool keepdim) {
  Shape result;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced)
      result.push_back(shape[d]);
    else if (keepdim)
      result.push_back(1);
  }
  return result;
}

std::vector<int64_t> identityDims(int64_t rank) {
  std::vector<int64_t> dims(rank);
  std::iota(dims.begin(), dims.end(), 0);
  return dims;
}

Tensor swapLastTwo(const Tensor &x, Loc loc) {
  std::vector<int64_t> perm = identityDims(x.dim());
  std::swap(perm[x.dim() - 1], perm[x.dim() - 2]);
  return transpose(x, perm, loc);
}

} // namespace

// Note [Results in gradient functions]
// A gradient function must not hold its own result's Tensor: the result's
// TensorImpl owns the gradient function, so that would be a cycle and leak
// every step's graph. It holds the result's node instead and wraps it in a
// fresh, gradient-free handle when the backward pass runs.
Tensor resultOf(const lazy::NodePtr &node) { return Tensor(std::make_shared<TensorImpl>(node)); }

Tensor fullLike(const Tensor &like, double value, Loc loc) {
  return fullOf(like.shape(), like.dtype(), detail::roundTo(like.dtype(), value), like.device(),
                loc);
}

Tensor iota(const Shape &shape, int64_t axis, DType dtype, Loc loc) {
  lazy::Attrs attrs;
  attrs.axis = axis;
  return rec(Op::Iota, std::move(attrs), {}, shape, dtype, loc);
}

Tensor unary(Op op, const Tensor &x, Loc loc) {
  Tensor y = rec(op, {}, {&x}, x.shape(), x.dtype(), loc);
  if (!detail::needsGrad(x))
    return y;
  auto backward = [op, x, yNode = detail::nodeOf(y), loc](const Tensor &g) -> std::vector<Tensor> {
    Tensor y = resultOf(yNode);
    switch (op) {
#define SINTER_UNARY_OP(Name, mnemonic, operands, reference, cpu, cuda, gradient)                  \
  case Op::Name:                                                                                   \
    return {gradient};
#define SINTER_BINARY_OP(...)
#include "sinter/lazy/Ops.def"
    default:
      return {};
    }
  };
  detail::attachGrad(y, lazy::name(op), {x}, backward, loc);
  return y;
}

Tensor binary(Op op, const Tensor &a, const Tensor &b, Loc loc) {
  Tensor y = rec(op, {}, {&a, &b}, a.shape(), a.dtype(), loc);
  if (!detail::needsGrad(a, b))
    return y;
  auto backward = [op, a, b, yNode = detail::nodeOf(y),
                   loc](const Tensor &g) -> std::vector<Tensor> {
    Tensor y = resultOf(yNode);
    switch (op) {
#define SINTER_UNARY_OP(...)
#define SINTER_BINARY_OP(Name, mnemonic, operands, reference, cpu, cuda, gradientA, gradientB)     \
  case Op::Name:                                                                                   \
    return {gradientA, gradientB};
#include "sinter/lazy/Ops.def"
    default:
      return {};
    }
  };
  detail::attachGrad(y, lazy::name(op), {a, b}, backward, loc);
  return y;
}

Tensor compare(lazy::CompareKind kind, const Tensor &a, const Tensor &b, Loc loc) {
  lazy::Attrs attrs;
  attrs.kind = static_cast<uint8_t>(kind);
  return rec(Op::Compare, std::move(attrs), {&a, &b}, a.shape(), DType::boolean, loc);
}

Tensor select(const Tensor &pred, const Tensor &a, const Tensor &b, Loc loc) {
  Tensor y = rec(Op::Select, {}, {&pred, &a, &b}, a.shape(), a.dtype(), loc);
  if (detail::needsGrad(pred, a, b))
    detail::attachGrad(
        y, "select", {pred, a, b},
        [pred, loc](const Tensor &g) -> std::vector<Tensor> {
          Tensor zero = zerosLike(g, loc);
          return {Tensor(), choose(pred, g, zero, loc), choose(pred, zero, g, loc)};
        },
        loc);
  return y;
}

Tensor convert(const Tensor &x, DType dtype, Loc loc) {
  Tensor y = rec(Op::Convert, {}, {&x}, x.shape(), dtype, loc);
  if (isFloatingPoint(dtype))
    if (detail::needsGrad(x))
      detail::attachGrad(
          y, "convert", {x},
          [from = x.dtype(), loc](const Tensor &g) -> std::vector<Tensor> {
            return {convert(g, from, loc)};
          },
          loc);
  return y;
}

Tensor broadcast(const Tensor &x, const Shape &shape, std::vector<int64_t> dims, Loc loc) {
  lazy::Attrs attrs;
  attrs.dims = dims;
  Tensor y = rec(Op::Broadcast, std::move(attrs), {&x}, shape, x.dtype(), loc);
  if (detail::needsGrad(x))
    detail::attachGrad(
        y, "broadcast_in_dim", {x},
        [from = x.shape(), dims, loc](const Tensor &g) -> std::vector<Tensor> {
          return {unbroadcast(g, from, dims, loc)};
        },
        loc);
  return y;
}

Tensor reshape(const Tensor &x, const Shape &shape, Loc loc) {
  Tensor y = rec(Op::Reshape, {}, {&x}, shape, x.dtype(), loc);
  if (detail::needsGrad(x))
    detail::attachGrad(
        y, "reshape", {x},
        [from = x.shape(), loc](const Tensor &g) -> std::vector<Tensor> {
          return {prim::reshape(g, from, loc)};
        },
        loc);
  return y;
}

Tensor transpose(const Tensor &x, std::vector<int64_t> perm, Loc loc) {
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x.shape()[p]);
  lazy::Attrs attrs;
  attrs.dims = perm;
  Tensor y = rec(Op::Transpose, std::move(attrs), {&x}, shape, x.dtype(), loc);
  if (detail::needsGrad(x))
    detail::attachGrad(
        y, "transpose", {x},
        [perm, loc](const Tensor &g) -> std::vector<Tensor> {
          std::vector<int64_t> inverse(perm.size());
          for (size_t i = 0; i < perm.size(); ++i)
            inverse[perm[i]] = static_cast<int64_t>(i);
          return {transpose(g, inverse, loc)};
        },
        loc);
  return y;
}

Tensor slice(const Tensor &x, std::vector<int64_t> start, std::vector<int64_t> limit,
             std::vector<int64_t> step, Loc loc) {
  Shape shape;
  for (int64_t d = 0; d < x.dim(); ++d)
    shape.push_back((limit[d] - start[d] + step[d] - 1) / step[d]);
  lazy::Attrs attrs;
  attrs.dims = start;
  attrs.dims2 = limit;
  attrs.dims3 = step;
  Tensor y = rec(Op::Slice, std::move(attrs), {&x}, shape, x.dtype(), loc);
  if (detail::needsGrad(x))
    detail::attachGrad(
        y, "slice", {x},
        [from = x.shape(), start, step, loc](const Tensor &g) -> std::vector<Tensor> {
          return {unslice(g, from, start, step, loc)};
        },
        loc);
  return y;
}

Tensor concat(const std::vector<Tensor> &xs, int64_t axis, Loc loc) {
  Shape shape = xs.front().shape();
  for (size_t i = 1; i < xs.size(); ++i)
    shape[axis] += xs[i].shape()[axis];
  lazy::Attrs attrs;
  attrs.axis = axis;
  Tensor y = rec(Op::Concat, std::move(attrs), xs, shape, xs.front().dtype(), loc);
  std::vector<int64_t> sizes;
  for (const Tensor &x : xs)
    sizes.push_back(x.shape()[axis]);
  if (detail::needsGrad(xs))
    detail::attachGrad(
        y, "concat", xs,
        [sizes, axis, loc](const Tensor &g) -> std::vector<Tensor> {
          std::vector<Tensor> grads;
          int64_t offset = 0;
          for (int64_t size : sizes) {
            std::vector<int64_t> start(g.dim(), 0), limit = g.shape(), step(g.dim(), 1);
            start[axis] = offset;
            limit[axis] = offset + size;
            grads.push_back(slice(g, start, limit, step, loc));
            offset += size;
          }
          return grads;
        },
        loc);
  return y;
}

Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis, Loc loc) {
  Shape shape(x.shape().begin(), x.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  lazy::Attrs attrs;
  attrs.axis = axis;
  Tensor y = rec(Op::Gather, std::move(attrs), {&x, &indices}, shape, x.dtype(), loc);
  if (detail::needsGrad(x, indices))
    detail::attachGrad(
        y, "gather", {x, indices},
        [x, indices, axis, loc](const Tensor &g) -> std::vector<Tensor> {
          return {scatterAdd(zerosLike(x, loc), indices, g, axis, loc), Tensor()};
        },
        loc);
  return y;
}

Tensor scatterAdd(const Tensor &x, const Tensor &indices, const Tensor &updates, int64_t axis,
                  Loc loc) {
  lazy::Attrs attrs;
  attrs.axis = axis;
  Tensor y =
      rec(Op::ScatterAdd, std::move(attrs), {&x, &indices, &updates}, x.shape(), x.dtype(), loc);
  if (detail::needsGrad(x, indices, updates))
    detail::attachGrad(
        y, "scatter_add", {x, indices, updates},
        [indices, axis, loc](const Tensor &g) -> std::vector<Tensor> {
          return {g, Tensor(), gather(g, indices, axis, loc)};
        },
        loc);
  return y;
}

/// Records a sum or max over `dims`.
Tensor recordReduction(Op op, const Tensor &x, const std::vector<int64_t> &dims, bool keepdim,
                       Loc loc) {
  lazy::Attrs attrs;
  attrs.dims = dims;
  attrs.flag = keepdim;
  return rec(op, std::move(attrs), {&x}, reducedShape(x.shape(), dims, keepdim), x.dtype(), loc);
}

Tensor reduceSum(const Tensor &x, std::vector<int64_t> dims, bool keepdim, Loc loc) {
  Tensor y = recordReduction(Op::ReduceSum, x, dims, keepdim, loc);
  Shape kept = keepdimShape(x.shape(), dims);
  if (detail::needsGrad(x))
    detail::attachGrad(
        y, "reduce_sum", {x},
        [from = x.shape(), kept, loc](const Tensor &g) -> std::vector<Tensor> {
          Tensor gk = g.shape() == kept ? g : prim::reshape(g, kept, loc);
          return {broadcast(gk, from, identityDims(static_cast<int64_t>(from.size())), loc)};
        },
        loc);
  return y;
}

Tensor reduceMax(const Tensor &x, std::vector<int64_t> dims, bool keepdim, Loc loc) {
  Tensor y = recordReduction(Op::ReduceMax, x, dims, keepdim, loc);
  Shape kept = keepdimShape(x.shape(), dims);
  if (detail::needsGrad(x))
    detail::attachGrad(
        y, "reduce_max", {x},
        [x, yNode = detail::nodeOf(y), dims, kept, loc](const Tensor &g) -> std::vector<Tensor> {
          Tensor y = resultOf(yNode);
          // Ties share the gradient evenly, as PyTorch's amax does.
          std::vector<int64_t> all = identityDims(x.dim());
          Tensor yk = y.shape() == kept ? y : prim::reshape(y, kept, loc);
          Tensor gk = g.shape() == kept ? g : prim::reshape(g, kept, loc);
          Tensor mask =
              convert(compare(lazy::CompareKind::eq, x, broadcast(yk, x.shape(), all, loc), loc),
                      x.dtype(), loc);
          Tensor count = reduceSum(mask, dims, true, loc);
          return {mul(mask, broadcast(div(gk, count, loc), x.shape(), all, loc), loc)};
        },
        loc);
  return y;
}

Tensor allReduce(const Tensor &x, int kind, Loc loc) {
  lazy::Attrs attrs;
  attrs.kind = static_cast<uint8_t>(kind);
  Tensor y = rec(Op::AllReduce, std::move(attrs), {&x}, x.shape(), x.dtype(), loc);
  if (detail::needsGrad(x)) {
    // y_r = sum (or mean) over k of x_k: the gradient reaching x_r is the
    // sum (or mean) over the ranks of their gradients of y.
    SINTER_CHECK(kind <= 1, loc,
                 "all_reduce: a Max or Min over ranks has no gradient; reduce a tensor that does "
                 "not require grad (detach() it)");
    detail::attachGrad(
        y, "all_reduce", {x},
        [kind, loc](const Tensor &g) -> std::vector<Tensor> { return {allReduce(g, kind, loc)}; },
        loc);
  }
  return y;
}

Tensor reduceScatter(const Tensor &x, int kind, int64_t ranks, Loc loc) {
  SINTER_CHECK(x.dim() == 1 && ranks > 0 && x.shape()[0] % ranks == 0, loc,
               "reduce_scatter: needs a 1-D tensor whose length the world size (" +
                   std::to_string(ranks) + ") divides, got " + toString(x.shape()));
  lazy::Attrs attrs;
  attrs.kind = static_cast<uint8_t>(kind);
  attrs.axis = ranks;
  Tensor y = rec(Op::ReduceScatter, std::move(attrs), {&x}, {x.shape()[0] / ranks}, x.dtype(), loc);
  if (detail::needsGrad(x)) {
    // y_r = the sum (or mean) over k of x_k's r-th slice: x_r's k-th slice
    // reaches y_k only, so its gradient is rank k's gradient of y.
    SINTER_CHECK(kind <= 1, loc,
                 "reduce_scatter: a Max or Min over ranks has no gradient; reduce a tensor that "
                 "does not require grad (detach() it)");
    detail::attachGrad(
        y, "reduce_scatter", {x},
        [kind, ranks, loc](const Tensor &g) -> std::vector<Tensor> {
          Tensor all = allGather(g, ranks, loc);
          return {kind == 1 ? div(all, fullLike(all, static_cast<double>(ranks), loc), loc) : all};
        },
        loc);
  }
  return y;
}

Tensor allGather(const Tensor &x, int64_t ranks, Loc loc) {
  SINTER_CHECK(x.dim() == 1 && ranks > 0, loc,
               "all_gather: needs a 1-D tensor, got " + toString(x.shape()));
  lazy::Attrs attrs;
  attrs.axis = ranks;
  Tensor y = rec(Op::AllGather, std::move(attrs), {&x}, {x.shape()[0] * ranks}, x.dtype(), loc);
  if (detail::needsGrad(x))
    // x_r is the r-th slice of every rank's y: its gradient is the sum of
    // those slices' gradients over the ranks.
    detail::attachGrad(
        y, "all_gather", {x},
        [ranks, loc](const Tensor &g) -> std::vector<Tensor> {
          return {reduceScatter(g, 0, ranks, loc)};
        },
        loc);
  return y;
}

Tensor argmax(const Tensor &x, int64_t axis, bool keepdim, Loc loc) {
  Shape shape;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != axis)
      shape.push_back(x.shape()[d]);
    else if (keepdim)
      shape.push_back(1);
  lazy::Attrs attrs;
  attrs.axis = axis;
  attrs.flag = keepdim;
  return rec(Op::ArgMax, std::move(attrs), {&x}, shape, DType::i64, loc);
}

Tensor matmul(const Tensor &a, const Tensor &b, bool ta, bool tb, Loc loc) {
  int64_t rank = a.dim();
  Shape shape(a.shape().begin(), a.shape().end() - 2);
  shape.push_back(ta ? a.shape()[rank - 1] : a.shape()[rank - 2]);
  shape.push_back(tb ? b.shape()[b.dim() - 2] : b.shape()[b.dim() - 1]);
  lazy::Attrs attrs;
  attrs.flag = ta;
  attrs.flag2 = tb;
  Tensor y = rec(Op::Matmul, std::move(attrs), {&a, &b}, shape, a.dtype(), loc);
  if (detail::needsGrad(a, b))
    detail::attachGrad(
        y, "matmul", {a, b},
        [a, b, ta, tb, loc](const Tensor &g) -> std::vector<Tensor> {
          // y = op(a) op(b): d op(a) = g op(b)^T and d op(b) = op(a)^T g; a
          // transposed operand's gradient is the transpose of its op's.
          Tensor gOpA = matmul(g, b, false, !tb, loc);
          Tensor ga = ta ? swapLastTwo(gOpA, loc) : gOpA;
          Tensor gOpB;
          if (b.dim() == 2 && a.dim() > 2) {
            // A matrix shared by the batch: its gradient sums over the batch,
            // so fold the batch into the rows.
            Tensor opA = ta ? swapLastTwo(a, loc) : a;
            int64_t k = opA.shape().back(), n = g.shape().back();
            gOpB = matmul(prim::reshape(opA, {opA.numel() / k, k}, loc),
                          prim::reshape(g, {g.numel() / n, n}, loc), true, false, loc);
          } else {
            gOpB = matmul(a, g, !ta, false, loc);
          }
          Tensor gb = tb ? swapLastTwo(gOpB, loc) : gOpB;
          return {ga, gb};
        },
        loc);
  return y;
}

} // namespace sinter::prim

namespace sinter::prim {
namespace {

lazy::Attrs convAttrs(const ConvParams &p) {
  lazy::Attrs attrs;
  attrs.dims = p.stride;
  attrs.dims2 = p.padding;
  attrs.dims3 = p.dilation;
  attrs.axis = p.groups;
  return attrs;
}

lazy::Attrs poolAttrs(const PoolParams &p) {
  lazy::Attrs attrs;
  attrs.kind = p.max ? 0 : 1;
  attrs.dims = p.kernel;
  attrs.dims2 = p.stride;
  attrs.dims3 = p.padding;
  return attrs;
}

} // namespace

Tensor conv2d(const Tensor &input, const Tensor &filter, const ConvParams &p, Loc loc) {
  const Shape &in = input.shape(), &w = filter.shape();
  Shape shape = {in[0], w[0]};
  for (int d = 0; d < 2; ++d)
    shape.push_back(
        (in[2 + d] + 2 * p.padding[d] - p.dilation[d] * (w[2 + d] - 1) - 1) / p.stride[d] + 1);
  Tensor y = rec(Op::Conv2d, convAttrs(p), {&input, &filter}, shape, input.dtype(), loc);
  if (detail::needsGrad(input, filter))
    detail::attachGrad(
        y, "conv2d", {input, filter},
        [input, filter, p, loc](const Tensor &g) -> std::vector<Tensor> {
          return {rec(Op::Conv2dBackwardInput, convAttrs(p), {&g, &filter}, input.shape(),
                      input.dtype(), loc),
                  rec(Op::Conv2dBackwardFilter, convAttrs(p), {&input, &g}, filter.shape(),
                      filter.dtype(), loc)};
        },
        loc);
  return y;
}

Tensor pool2d(const Tensor &input, const PoolParams &p, Loc loc) {
  const Shape &in = input.shape();
  Shape shape = {in[0], in[1]};
  for (int d = 0; d < 2; ++d)
    shape.push_back((in[2 + d] + 2 * p.padding[d] - p.kernel[d]) / p.stride[d] + 1);
  Tensor y = rec(Op::Pool2d, poolAttrs(p), {&input}, shape, input.dtype(), loc);
  if (detail::needsGrad(input))
    detail::attachGrad(
        y, "pool2d", {input},
        [input, p, loc](const Tensor &g) -> std::vector<Tensor> {
          return {rec(Op::Pool2dBackward, poolAttrs(p), {&input, &g}, input.shape(), input.dtype(),
                      loc)};
        },
        loc);
  return y;
}

} // namespace sinter::prim
