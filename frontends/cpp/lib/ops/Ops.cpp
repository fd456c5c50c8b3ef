//===- Ops.cpp - PyTorch's semantics on top of the primitives -------------===//
//
// What users call: PyTorch's names, broadcasting, type promotion, negative
// dims and slicing rules. Every check a user can fail is here, with a message
// that names the op, the shapes or dtypes, and (through SINTER_CHECK) the
// user's line; the primitives below then record nodes that are valid by
// construction.
//
//===----------------------------------------------------------------------===//
#include "Primitives.h"
#include "sinter/Error.h"

#include "../Step.h"

#include "../Format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sinter {
namespace {

using lazy::CompareKind;
using lazy::Op;

void checkDefined(const Tensor &t, std::string_view op, Loc loc) {
  SINTER_CHECK(t.defined(), loc, cat(std::string(op), ": the tensor is undefined"));
}

std::string shapeStr(const Tensor &t) { return toString(t.shape()); }

int64_t normDim(int64_t d, int64_t rank, std::string_view op, Loc loc) {
  int64_t extent = std::max<int64_t>(rank, 1);
  SINTER_CHECK(
      d >= -extent && d < extent, loc,
      cat(std::string(op), ": dimension ", d, " is out of range for a tensor of rank ", rank));
  return d < 0 ? d + extent : d;
}

std::vector<int64_t> normDims(const std::vector<int64_t> &dims, int64_t rank, std::string_view op,
                              Loc loc) {
  std::vector<int64_t> result;
  if (rank == 0) { // a scalar: dim 0 or -1 names the scalar itself, as in PyTorch
    for (int64_t d : dims)
      normDim(d, rank, op, loc);
    return result;
  }
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d)
      result.push_back(d);
  for (int64_t d : dims) {
    int64_t n = normDim(d, rank, op, loc);
    SINTER_CHECK(std::find(result.begin(), result.end(), n) == result.end(), loc,
                 cat(std::string(op), ": dimension ", d, " appears twice in [",
                     absl::StrJoin(dims, ", "), "]"));
    result.push_back(n);
  }
  std::sort(result.begin(), result.end());
  return result;
}

int kindRank(DType t) {
  switch (t) {
  case DType::boolean:
    return 0;
  case DType::i32:
    return 1;
  case DType::i64:
    return 2;
  case DType::f16:
  case DType::bf16:
    return 3;
  case DType::f32:
    return 4;
  }
  return 0;
}

bool isHalf(DType t) { return t == DType::f16 || t == DType::bf16; }

/// PyTorch's promotion between two tensors' dtypes.
DType promote(DType a, DType b) {
  if (a == b)
    return a;
  if ((a == DType::f16 && b == DType::bf16) || (a == DType::bf16 && b == DType::f16))
    return DType::f32;
  return kindRank(a) >= kindRank(b) ? a : b;
}

/// The dtype of `tensor op number`: the tensor's, unless a fractional number
/// meets an integer tensor (then f32) or any number meets a bool tensor.
DType promoteScalar(DType tensor, double value, bool floating = false) {
  if (isFloatingPoint(tensor))
    return tensor;
  if (floating || value != std::floor(value))
    return DType::f32;
  return tensor == DType::boolean ? DType::i64 : tensor;
}

Shape broadcastShapes(const Shape &a, const Shape &b, std::string_view op, Loc loc) {
  size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    SINTER_CHECK(da == db || da == 1 || db == 1, loc,
                 cat(std::string(op), ": shapes ", toString(a), " and ", toString(b),
                     " cannot be broadcast together (dimension ", i, ": ", da, " vs ", db, ")"));
    result[i] = da == 1 ? db : da;
  }
  return result;
}

Tensor expandTo(const Tensor &x, const Shape &shape, Loc loc) {
  if (x.shape() == shape)
    return x;
  std::vector<int64_t> dims;
  int64_t offset = static_cast<int64_t>(shape.size()) - x.dim();
  for (int64_t d = 0; d < x.dim(); ++d)
    dims.push_back(d + offset);
  return prim::broadcast(x, shape, dims, loc);
}

Tensor castTo(const Tensor &x, DType dtype, Loc loc) {
  return x.dtype() == dtype ? x : prim::convert(x, dtype, loc);
}

void checkSameDevice(const Tensor &a, const Tensor &b, std::string_view op, Loc loc) {
  SINTER_CHECK(a.device() == b.device(), loc,
               cat(std::string(op), ": tensors are on different devices (", a.device().toString(),
                   " and ", b.device().toString(), ")"));
}

/// Brings two operands (the second maybe a number) to one dtype and shape.
std::pair<Tensor, Tensor> align(const Tensor &a, const Operand &b, std::string_view op,
                                std::optional<DType> forced, Loc loc) {
  checkDefined(a, op, loc);
  if (b.scalar) {
    DType dtype = forced.value_or(promoteScalar(a.dtype(), *b.scalar, b.floating));
    Tensor x = castTo(a, dtype, loc);
    return {x, prim::fullLike(x, *b.scalar, loc)};
  }
  checkDefined(b.tensor, op, loc);
  checkSameDevice(a, b.tensor, op, loc);
  DType dtype = forced.value_or(promote(a.dtype(), b.tensor.dtype()));
  if (a.shape() == b.tensor.shape()) // the common case, without a new shape
    return {castTo(a, dtype, loc), castTo(b.tensor, dtype, loc)};
  Shape shape = broadcastShapes(a.shape(), b.tensor.shape(), op, loc);
  return {expandTo(castTo(a, dtype, loc), shape, loc),
          expandTo(castTo(b.tensor, dtype, loc), shape, loc)};
}

Tensor arith(Op op, std::string_view name, const Tensor &a, const Operand &b) {
  std::optional<DType> forced;
  if (op == Op::Div) { // true division, as Python's `/`
    DType natural = b.scalar
                        ? promoteScalar(a.dtype(), *b.scalar)
                        : promote(a.dtype(), b.tensor.defined() ? b.tensor.dtype() : a.dtype());
    if (!isFloatingPoint(natural))
      forced = DType::f32;
  }
  auto [x, y] = align(a, b, name, forced, b.loc);
  SINTER_CHECK(x.dtype() != DType::boolean, b.loc,
               cat(std::string(name), ": arithmetic on bool tensors is not supported"));
  return prim::binary(op, x, y, b.loc);
}

Tensor comparison(CompareKind kind, std::string_view name, const Tensor &a, const Operand &b) {
  auto [x, y] = align(a, b, name, std::nullopt, b.loc);
  return prim::compare(kind, x, y, b.loc);
}

/// An op of the op table on one tensor, which must be of a dtype the
/// table's row takes (Note [The op table] in sinter/lazy/Ops.def).
Tensor elementwise(Op op, const Tensor &x, Loc loc) {
  std::string name(lazy::name(op));
  checkDefined(x, name, loc);
  lazy::Operands operands = *lazy::operandsOf(op);
  SINTER_CHECK(lazy::accepts(operands, x.dtype()), loc,
               cat(name, ": expects ", lazy::describe(operands), ", got ", sinter::name(x.dtype()),
                   " of shape ", shapeStr(x)));
  return prim::unary(op, x, loc);
}

/// bitwise_and, _or, _xor (and &, |, ^): bool or integer operands, promoted
/// and broadcast as arithmetic is.
Tensor bitwise(Op op, std::string_view name, const Tensor &a, const Operand &b) {
  auto [x, y] = align(a, b, name, std::nullopt, b.loc);
  SINTER_CHECK(lazy::accepts(lazy::Operands::Logical, x.dtype()), b.loc,
               cat(std::string(name), ": expects bool or integer tensors, got ",
                   sinter::name(x.dtype()), " (of ", sinter::name(a.dtype()), " and ",
                   b.scalar ? std::string("a number") : std::string(sinter::name(b.tensor.dtype())),
                   ")"));
  return prim::binary(op, x, y, b.loc);
}

/// x as booleans: x itself if bool, else x != 0 (PyTorch's logical ops).
Tensor truth(const Tensor &x, Loc loc) {
  return x.dtype() == DType::boolean
             ? x
             : prim::compare(CompareKind::ne, x, prim::fullLike(x, 0.0, loc), loc);
}

/// logical_and, _or, _xor: bools of the operands' truth, broadcast.
Tensor logical(Op op, std::string_view name, const Tensor &a, const Tensor &b, Loc loc) {
  checkDefined(a, name, loc);
  checkDefined(b, name, loc);
  checkSameDevice(a, b, name, loc);
  Shape shape = broadcastShapes(a.shape(), b.shape(), name, loc);
  return prim::binary(op, expandTo(truth(a, loc), shape, loc), expandTo(truth(b, loc), shape, loc),
                      loc);
}

} // namespace

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

Tensor operator+(const Tensor &a, const Operand &b) { return arith(Op::Add, "add", a, b); }
Tensor operator-(const Tensor &a, const Operand &b) { return arith(Op::Sub, "sub", a, b); }
Tensor operator*(const Tensor &a, const Operand &b) { return arith(Op::Mul, "mul", a, b); }
Tensor operator/(const Tensor &a, const Operand &b) { return arith(Op::Div, "div", a, b); }

namespace {
Tensor scalarFirst(Op op, std::string_view name, Scalar a, const Tensor &b) {
  checkDefined(b, name, a.loc);
  Tensor x = prim::fullLike(castTo(b, promoteScalar(b.dtype(), a.value, a.floating), a.loc),
                            a.value, a.loc);
  return arith(op, name, x, Operand(b, a.loc));
}
} // namespace

Tensor operator+(Scalar a, const Tensor &b) { return scalarFirst(Op::Add, "add", a, b); }
Tensor operator-(Scalar a, const Tensor &b) { return scalarFirst(Op::Sub, "sub", a, b); }
Tensor operator*(Scalar a, const Tensor &b) { return scalarFirst(Op::Mul, "mul", a, b); }
Tensor operator/(Scalar a, const Tensor &b) { return scalarFirst(Op::Div, "div", a, b); }

Tensor operator-(const Tensor &a) {
  Loc loc = Loc::current();
  checkDefined(a, "neg", loc);
  SINTER_CHECK(a.dtype() != DType::boolean, loc, "neg: negation of a bool tensor");
  return prim::unary(Op::Neg, a, loc);
}

Tensor operator==(const Tensor &a, const Operand &b) {
  return comparison(CompareKind::eq, "eq", a, b);
}
Tensor operator!=(const Tensor &a, const Operand &b) {
  return comparison(CompareKind::ne, "ne", a, b);
}
Tensor operator<(const Tensor &a, const Operand &b) {
  return comparison(CompareKind::lt, "lt", a, b);
}
Tensor operator<=(const Tensor &a, const Operand &b) {
  return comparison(CompareKind::le, "le", a, b);
}
Tensor operator>(const Tensor &a, const Operand &b) {
  return comparison(CompareKind::gt, "gt", a, b);
}
Tensor operator>=(const Tensor &a, const Operand &b) {
  return comparison(CompareKind::ge, "ge", a, b);
}

//===----------------------------------------------------------------------===//
// Elementwise functions
//===----------------------------------------------------------------------===//

Tensor exp(const Tensor &x, Loc loc) { return elementwise(Op::Exp, x, loc); }
Tensor log(const Tensor &x, Loc loc) { return elementwise(Op::Log, x, loc); }
Tensor tanh(const Tensor &x, Loc loc) { return elementwise(Op::Tanh, x, loc); }
Tensor sqrt(const Tensor &x, Loc loc) { return elementwise(Op::Sqrt, x, loc); }
Tensor rsqrt(const Tensor &x, Loc loc) { return elementwise(Op::Rsqrt, x, loc); }
Tensor sigmoid(const Tensor &x, Loc loc) { return elementwise(Op::Sigmoid, x, loc); }
Tensor erf(const Tensor &x, Loc loc) { return elementwise(Op::Erf, x, loc); }
Tensor sin(const Tensor &x, Loc loc) { return elementwise(Op::Sin, x, loc); }
Tensor cos(const Tensor &x, Loc loc) { return elementwise(Op::Cos, x, loc); }

Tensor logical_not(const Tensor &x, Loc loc) {
  checkDefined(x, "logical_not", loc);
  return x.dtype() == DType::boolean
             ? prim::unary(Op::Not, x, loc)
             : prim::compare(CompareKind::eq, x, prim::fullLike(x, 0.0, loc), loc);
}
Tensor logical_and(const Tensor &a, const Tensor &b, Loc loc) {
  return logical(Op::And, "logical_and", a, b, loc);
}
Tensor logical_or(const Tensor &a, const Tensor &b, Loc loc) {
  return logical(Op::Or, "logical_or", a, b, loc);
}
Tensor logical_xor(const Tensor &a, const Tensor &b, Loc loc) {
  return logical(Op::Xor, "logical_xor", a, b, loc);
}
Tensor bitwise_and(const Tensor &a, const Operand &b) {
  return bitwise(Op::And, "bitwise_and", a, b);
}
Tensor bitwise_or(const Tensor &a, const Operand &b) { return bitwise(Op::Or, "bitwise_or", a, b); }
Tensor bitwise_xor(const Tensor &a, const Operand &b) {
  return bitwise(Op::Xor, "bitwise_xor", a, b);
}
Tensor bitwise_not(const Tensor &x, Loc loc) {
  checkDefined(x, "bitwise_not", loc);
  SINTER_CHECK(lazy::accepts(lazy::Operands::Logical, x.dtype()), loc,
               cat("bitwise_not: expects ", lazy::describe(lazy::Operands::Logical), ", got ",
                   sinter::name(x.dtype()),
                   " of shape ", shapeStr(x)));
  if (x.dtype() == DType::boolean)
    return prim::unary(Op::Not, x, loc);
  // ~x = -x - 1 in two's complement, wrapping where -x does.
  Tensor negated = prim::unary(Op::Neg, x, loc);
  return prim::binary(Op::Sub, negated, prim::fullLike(negated, 1.0, loc), loc);
}
Tensor operator&(const Tensor &a, const Operand &b) { return bitwise(Op::And, "and", a, b); }
Tensor operator|(const Tensor &a, const Operand &b) { return bitwise(Op::Or, "or", a, b); }
Tensor operator^(const Tensor &a, const Operand &b) { return bitwise(Op::Xor, "xor", a, b); }
Tensor operator~(const Tensor &x) { return bitwise_not(x, Loc::current()); }

Tensor abs(const Tensor &x, Loc loc) {
  checkDefined(x, "abs", loc);
  SINTER_CHECK(x.dtype() != DType::boolean, loc, "abs: not defined for bool tensors");
  return prim::unary(Op::Abs, x, loc);
}

Tensor relu(const Tensor &x, Loc loc) {
  checkDefined(x, "relu", loc);
  // x <= 0 ? 0 : x, so that NaN propagates (as PyTorch) and the gradient at 0 is 0.
  Tensor zero = prim::fullLike(x, 0.0, loc);
  return prim::select(prim::compare(CompareKind::le, x, zero, loc), zero, x, loc);
}

Tensor pow(const Tensor &x, double exponent, Loc loc) {
  checkDefined(x, "pow", loc);
  Tensor base = castTo(x, isFloatingPoint(x.dtype()) ? x.dtype() : DType::f32, loc);
  return prim::binary(Op::Pow, base, prim::fullLike(base, exponent, loc), loc);
}

Tensor pow(const Tensor &x, const Tensor &exponent, Loc loc) {
  std::optional<DType> forced;
  if (!isFloatingPoint(promote(x.dtype(), exponent.dtype())))
    forced = DType::f32;
  auto [a, b] = align(x, Operand(exponent, loc), "pow", forced, loc);
  return prim::binary(Op::Pow, a, b, loc);
}

Tensor maximum(const Tensor &a, const Tensor &b, Loc loc) {
  auto [x, y] = align(a, Operand(b, loc), "maximum", std::nullopt, loc);
  return prim::binary(Op::Max, x, y, loc);
}

Tensor minimum(const Tensor &a, const Tensor &b, Loc loc) {
  auto [x, y] = align(a, Operand(b, loc), "minimum", std::nullopt, loc);
  return prim::binary(Op::Min, x, y, loc);
}

Tensor where(const Tensor &condition, const Tensor &a, const Tensor &b, Loc loc) {
  checkDefined(condition, "where", loc);
  SINTER_CHECK(condition.dtype() == DType::boolean, loc,
               cat("where: the condition must be a bool tensor, got ", name(condition.dtype())));
  auto [x, y] = align(a, Operand(b, loc), "where", std::nullopt, loc);
  Shape shape = broadcastShapes(condition.shape(), x.shape(), "where", loc);
  return prim::select(expandTo(condition, shape, loc), expandTo(x, shape, loc),
                      expandTo(y, shape, loc), loc);
}

Tensor masked_fill(const Tensor &x, const Tensor &mask, double value, Loc loc) {
  checkDefined(x, "masked_fill", loc);
  checkDefined(mask, "masked_fill", loc);
  SINTER_CHECK(mask.dtype() == DType::boolean, loc,
               cat("masked_fill: the mask must be a bool tensor, got ", name(mask.dtype())));
  Shape shape = broadcastShapes(x.shape(), mask.shape(), "masked_fill", loc);
  SINTER_CHECK(shape == x.shape(), loc,
               cat("masked_fill: mask of shape ", shapeStr(mask),
                   " does not broadcast to the tensor's shape ", shapeStr(x)));
  return prim::select(expandTo(mask, shape, loc), prim::fullLike(x, value, loc), x, loc);
}

Tensor Tensor::exp(Loc loc) const { return sinter::exp(*this, loc); }
Tensor Tensor::log(Loc loc) const { return sinter::log(*this, loc); }
Tensor Tensor::tanh(Loc loc) const { return sinter::tanh(*this, loc); }
Tensor Tensor::sqrt(Loc loc) const { return sinter::sqrt(*this, loc); }
Tensor Tensor::rsqrt(Loc loc) const { return sinter::rsqrt(*this, loc); }
Tensor Tensor::abs(Loc loc) const { return sinter::abs(*this, loc); }
Tensor Tensor::relu(Loc loc) const { return sinter::relu(*this, loc); }
Tensor Tensor::sigmoid(Loc loc) const { return sinter::sigmoid(*this, loc); }
Tensor Tensor::sin(Loc loc) const { return sinter::sin(*this, loc); }
Tensor Tensor::cos(Loc loc) const { return sinter::cos(*this, loc); }
Tensor Tensor::logical_not(Loc loc) const { return sinter::logical_not(*this, loc); }
Tensor Tensor::pow(double exponent, Loc loc) const { return sinter::pow(*this, exponent, loc); }
Tensor Tensor::pow(const Tensor &exponent, Loc loc) const {
  return sinter::pow(*this, exponent, loc);
}
Tensor Tensor::masked_fill(const Tensor &mask, double value, Loc loc) const {
  return sinter::masked_fill(*this, mask, value, loc);
}

Tensor Tensor::to(DType dtype, Loc loc) const {
  checkDefined(*this, "to", loc);
  return castTo(*this, dtype, loc);
}

Tensor Tensor::to(Device device, Loc loc) const {
  checkDefined(*this, "to", loc);
  if (device == this->device())
    return *this;
  device.ensureAvailable(loc);
  this->device().ensureAvailable(loc);
  // The move is a copy of the value in host memory (read from a CUDA
  // device's memory where it lives there), which a step on a CUDA device
  // copies there when it first reads it (Note [Two forms of a value]).
  std::shared_ptr<const lazy::Value> value = detail::valueOf(*this, loc);
  lazy::Value::Bytes bytes = lazy::Value::allocate(value->size() * elementSize(dtype()));
  std::memcpy(bytes.get(), detail::hostBytes(*value, loc), value->size() * elementSize(dtype()));
  return detail::fromValue(std::make_shared<lazy::Value>(std::move(bytes), value->size(), dtype()),
                           shape(), dtype(), device, loc);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

Tensor reshape(const Tensor &x, const Shape &shape, Loc loc) {
  checkDefined(x, "reshape", loc);
  Shape target = shape;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      SINTER_CHECK(inferred < 0, loc,
                   cat("reshape: only one dimension can be -1 in ", toString(shape)));
      inferred = static_cast<int64_t>(i);
      continue;
    }
    SINTER_CHECK(target[i] >= 0, loc, cat("reshape: invalid size in ", toString(shape)));
    known *= target[i];
  }
  if (inferred >= 0) {
    SINTER_CHECK(known > 0 && x.numel() % known == 0, loc,
                 cat("reshape: cannot reshape ", shapeStr(x), " (", x.numel(), " elements) to ",
                     toString(shape)));
    target[inferred] = x.numel() / known;
  }
  SINTER_CHECK(numel(target) == x.numel(), loc,
               cat("reshape: cannot reshape ", shapeStr(x), " (", x.numel(), " elements) to ",
                   toString(shape), " (", numel(target), " elements)"));
  return target == x.shape() ? x : prim::reshape(x, target, loc);
}

Tensor Tensor::reshape(const Shape &shape, Loc loc) const {
  return sinter::reshape(*this, shape, loc);
}
Tensor Tensor::view(const Shape &shape, Loc loc) const {
  return sinter::reshape(*this, shape, loc);
}

Tensor permute(const Tensor &x, const std::vector<int64_t> &dims, Loc loc) {
  checkDefined(x, "permute", loc);
  SINTER_CHECK(static_cast<int64_t>(dims.size()) == x.dim(), loc,
               cat("permute: got ", dims.size(), " dims [", absl::StrJoin(dims, ", "),
                   "] for a tensor of shape ", shapeStr(x)));
  std::vector<int64_t> perm;
  for (int64_t d : dims) {
    int64_t n = normDim(d, x.dim(), "permute", loc);
    SINTER_CHECK(std::find(perm.begin(), perm.end(), n) == perm.end(), loc,
                 cat("permute: [", absl::StrJoin(dims, ", "), "] repeats dimension ", d));
    perm.push_back(n);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? x : prim::transpose(x, perm, loc);
}

Tensor transpose(const Tensor &x, int64_t dim0, int64_t dim1, Loc loc) {
  checkDefined(x, "transpose", loc);
  if (x.dim() == 0)
    return x;
  std::vector<int64_t> perm(x.dim());
  for (int64_t d = 0; d < x.dim(); ++d)
    perm[d] = d;
  std::swap(perm[normDim(dim0, x.dim(), "transpose", loc)],
            perm[normDim(dim1, x.dim(), "transpose", loc)]);
  return permute(x, perm, loc);
}

Tensor Tensor::permute(const std::vector<int64_t> &dims, Loc loc) const {
  return sinter::permute(*this, dims, loc);
}
Tensor Tensor::transpose(int64_t dim0, int64_t dim1, Loc loc) const {
  return sinter::transpose(*this, dim0, dim1, loc);
}

Tensor Tensor::t(Loc loc) const {
  checkDefined(*this, "t", loc);
  SINTER_CHECK(dim() <= 2, loc,
               cat("t: expects a tensor of rank <= 2, got shape ", shapeStr(*this),
                   "; use transpose(dim0, dim1)"));
  return dim() < 2 ? *this : sinter::transpose(*this, 0, 1, loc);
}

Tensor Tensor::unsqueeze(int64_t d, Loc loc) const {
  checkDefined(*this, "unsqueeze", loc);
  int64_t at = normDim(d, dim() + 1, "unsqueeze", loc);
  Shape shape = this->shape();
  shape.insert(shape.begin() + at, 1);
  return prim::reshape(*this, shape, loc);
}

Tensor Tensor::squeeze(std::optional<int64_t> d, Loc loc) const {
  checkDefined(*this, "squeeze", loc);
  Shape shape;
  std::optional<int64_t> only;
  if (d)
    only = normDim(*d, dim(), "squeeze", loc);
  for (int64_t i = 0; i < dim(); ++i)
    if (this->shape()[i] != 1 || (only && *only != i))
      shape.push_back(this->shape()[i]);
  return shape == this->shape() ? *this : prim::reshape(*this, shape, loc);
}

Tensor Tensor::expand(const Shape &shape, Loc loc) const {
  checkDefined(*this, "expand", loc);
  SINTER_CHECK(shape.size() >= static_cast<size_t>(dim()), loc,
               cat("expand: cannot expand shape ", shapeStr(*this), " to ", sinter::toString(shape),
                   " (fewer dimensions)"));
  Shape target = shape;
  int64_t offset = static_cast<int64_t>(shape.size()) - dim();
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    int64_t own = i < offset ? 1 : this->shape()[i - offset];
    if (target[i] == -1) {
      SINTER_CHECK(i >= offset, loc, "expand: -1 is not allowed for a new leading dimension");
      target[i] = own;
    }
    SINTER_CHECK(target[i] >= 0, loc,
                 cat("expand: invalid size ", target[i], " in ", sinter::toString(shape)));
    SINTER_CHECK(own == target[i] || own == 1, loc,
                 cat("expand: cannot expand shape ", shapeStr(*this), " to ",
                     sinter::toString(shape), " (dimension ", i, ": ", own, " vs ", target[i],
                     ")"));
  }
  return expandTo(*this, target, loc);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step, Loc loc) const {
  checkDefined(*this, "slice", loc);
  SINTER_CHECK(dim() > 0, loc, "slice: cannot slice a scalar");
  int64_t axis = normDim(d, dim(), "slice", loc);
  SINTER_CHECK(step >= 1, loc, cat("slice: step must be at least 1, got ", step));
  int64_t size = shape()[axis];
  // Python's rules: negative indices count from the end; out of range clamps.
  auto clamp = [size](int64_t i) {
    if (i < 0)
      i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  int64_t from = clamp(start), to = std::max(clamp(end), clamp(start));
  std::vector<int64_t> starts(dim(), 0), limits = shape(), steps(dim(), 1);
  starts[axis] = from;
  limits[axis] = to;
  steps[axis] = step;
  if (from == 0 && to == size && step == 1)
    return *this;
  return prim::slice(*this, starts, limits, steps, loc);
}

Tensor cat(const std::vector<Tensor> &tensors, int64_t dim, Loc loc) {
  SINTER_CHECK(!tensors.empty(), loc, "cat: expects at least one tensor");
  for (const Tensor &t : tensors)
    checkDefined(t, "cat", loc);
  const Tensor &first = tensors.front();
  int64_t axis = normDim(dim, first.dim(), "cat", loc);
  DType dtype = first.dtype();
  for (const Tensor &t : tensors)
    dtype = promote(dtype, t.dtype());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    checkSameDevice(first, t, "cat", loc);
    bool same = t.dim() == first.dim();
    for (int64_t d = 0; same && d < t.dim(); ++d)
      same = d == axis || t.shape()[d] == first.shape()[d];
    SINTER_CHECK(same, loc,
                 cat("cat: tensor #", i, " has shape ", shapeStr(t), " but tensor #0 has ",
                     shapeStr(first), "; they may differ only in dimension ", axis));
    inputs.push_back(castTo(t, dtype, loc));
  }
  SINTER_CHECK(first.dim() > 0, loc, "cat: zero-dimensional tensors cannot be concatenated");
  return inputs.size() == 1 ? inputs.front() : prim::concat(inputs, axis, loc);
}

Tensor index_select(const Tensor &x, int64_t dim, const Tensor &index, Loc loc) {
  checkDefined(x, "index_select", loc);
  checkDefined(index, "index_select", loc);
  SINTER_CHECK(index.dtype() == DType::i32 || index.dtype() == DType::i64, loc,
               cat("index_select: index must be i32 or i64, got ", name(index.dtype())));
  SINTER_CHECK(x.dim() > 0, loc, "index_select: cannot index a scalar");
  return prim::gather(x, index, normDim(dim, x.dim(), "index_select", loc), loc);
}

Tensor stack(const std::vector<Tensor> &tensors, int64_t dim, Loc loc) {
  SINTER_CHECK(!tensors.empty(), loc, "stack: expects at least one tensor");
  checkDefined(tensors.front(), "stack", loc);
  int64_t at = normDim(dim, tensors.front().dim() + 1, "stack", loc);
  std::vector<Tensor> unsqueezed;
  for (size_t i = 0; i < tensors.size(); ++i) {
    checkDefined(tensors[i], "stack", loc);
    SINTER_CHECK(tensors[i].shape() == tensors.front().shape(), loc,
                 cat("stack: tensor #", i, " has shape ", shapeStr(tensors[i]),
                     " but tensor #0 has ", shapeStr(tensors.front())));
    unsqueezed.push_back(tensors[i].unsqueeze(at, loc));
  }
  return cat(unsqueezed, at, loc);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

Tensor sum(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim, Loc loc) {
  checkDefined(x, "sum", loc);
  std::vector<int64_t> reduced = normDims(dims, x.dim(), "sum", loc);
  // As PyTorch: bool and integer sums are i64.
  Tensor input = isFloatingPoint(x.dtype()) ? x : castTo(x, DType::i64, loc);
  return prim::reduceSum(input, reduced, keepdim, loc);
}

Tensor mean(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim, Loc loc) {
  checkDefined(x, "mean", loc);
  SINTER_CHECK(isFloatingPoint(x.dtype()), loc,
               cat("mean: expects a floating-point tensor, got ", name(x.dtype()),
                   "; convert with .to(sinter::DType::f32)"));
  std::vector<int64_t> reduced = normDims(dims, x.dim(), "mean", loc);
  int64_t count = 1;
  for (int64_t d : reduced)
    count *= x.shape()[d];
  // f16/bf16 are summed in f32, as PyTorch does: their sums overflow or lose
  // the small terms.
  Tensor input = isHalf(x.dtype()) ? prim::convert(x, DType::f32, loc) : x;
  Tensor total = prim::reduceSum(input, reduced, keepdim, loc);
  Tensor average =
      prim::binary(Op::Div, total, prim::fullLike(total, static_cast<double>(count), loc), loc);
  return castTo(average, x.dtype(), loc);
}

Tensor amax(const Tensor &x, const std::vector<int64_t> &dims, bool keepdim, Loc loc) {
  checkDefined(x, "amax", loc);
  SINTER_CHECK(x.numel() > 0, loc, "amax: the tensor is empty");
  return prim::reduceMax(x, normDims(dims, x.dim(), "amax", loc), keepdim, loc);
}

Tensor argmax(const Tensor &x, int64_t dim, bool keepdim, Loc loc) {
  checkDefined(x, "argmax", loc);
  SINTER_CHECK(x.dim() > 0, loc, "argmax: expects a tensor of rank >= 1");
  int64_t axis = normDim(dim, x.dim(), "argmax", loc);
  SINTER_CHECK(x.shape()[axis] > 0, loc,
               cat("argmax: dimension ", dim, " of shape ", shapeStr(x), " is empty"));
  return prim::argmax(x, axis, keepdim, loc);
}

Tensor Tensor::sum(const std::vector<int64_t> &dims, bool keepdim, Loc loc) const {
  return sinter::sum(*this, dims, keepdim, loc);
}
Tensor Tensor::mean(const std::vector<int64_t> &dims, bool keepdim, Loc loc) const {
  return sinter::mean(*this, dims, keepdim, loc);
}
Tensor Tensor::amax(const std::vector<int64_t> &dims, bool keepdim, Loc loc) const {
  return sinter::amax(*this, dims, keepdim, loc);
}
Tensor Tensor::argmax(int64_t dim, bool keepdim, Loc loc) const {
  return sinter::argmax(*this, dim, keepdim, loc);
}

//===----------------------------------------------------------------------===//
// Matmul and creation
//===----------------------------------------------------------------------===//

Tensor matmul(const Tensor &a, const Tensor &b, Loc loc) {
  checkDefined(a, "matmul", loc);
  checkDefined(b, "matmul", loc);
  checkSameDevice(a, b, "matmul", loc);
  SINTER_CHECK(a.dim() >= 1 && b.dim() >= 1, loc,
               cat("matmul: both arguments need at least one dimension, got shapes ", shapeStr(a),
                   " and ", shapeStr(b)));
  DType dtype = promote(a.dtype(), b.dtype());
  SINTER_CHECK(isFloatingPoint(dtype), loc,
               cat("matmul: expects floating-point tensors, got ", name(a.dtype()), " and ",
                   name(b.dtype())));
  Tensor x = castTo(a, dtype, loc), y = castTo(b, dtype, loc);
  // Vectors become matrices, and the added dimension is removed afterwards.
  bool vecA = x.dim() == 1, vecB = y.dim() == 1;
  if (vecA)
    x = x.unsqueeze(0, loc);
  if (vecB)
    y = y.unsqueeze(1, loc);
  int64_t k = x.shape().back(), kb = y.shape()[y.dim() - 2];
  SINTER_CHECK(k == kb, loc,
               cat("matmul: a ", shapeStr(a), " has ", k, " columns but b ", shapeStr(b), " has ",
                   kb, " rows"));
  Tensor result;
  if (y.dim() == 2) {
    result = prim::matmul(x, y, false, false, loc);
  } else {
    Shape batchA(x.shape().begin(), x.shape().end() - 2),
        batchB(y.shape().begin(), y.shape().end() - 2);
    Shape batch = broadcastShapes(batchA, batchB, "matmul", loc);
    Shape shapeA = batch, shapeB = batch;
    shapeA.insert(shapeA.end(), x.shape().end() - 2, x.shape().end());
    shapeB.insert(shapeB.end(), y.shape().end() - 2, y.shape().end());
    result = prim::matmul(expandTo(x, shapeA, loc), expandTo(y, shapeB, loc), false, false, loc);
  }
  if (vecB)
    result = result.squeeze(result.dim() - 1, loc);
  if (vecA)
    result = result.squeeze(vecB ? result.dim() - 1 : result.dim() - 2, loc);
  return result;
}

Tensor Tensor::matmul(const Tensor &other, Loc loc) const {
  return sinter::matmul(*this, other, loc);
}

Tensor arange(int64_t end, DType dtype, Loc loc) { return arange(0, end, 1, dtype, loc); }

Tensor arange(int64_t start, int64_t end, int64_t step, DType dtype, Loc loc) {
  SINTER_CHECK(step != 0, loc, "arange: step must not be zero");
  int64_t count = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
  count = std::max<int64_t>(count, 0);
  Tensor index = prim::iota({count}, 0, dtype, loc);
  if (start == 0 && step == 1)
    return index;
  Tensor scaled =
      prim::binary(Op::Mul, index, prim::fullLike(index, static_cast<double>(step), loc), loc);
  return prim::binary(Op::Add, scaled, prim::fullLike(index, static_cast<double>(start), loc), loc);
}

} // namespace sinter
