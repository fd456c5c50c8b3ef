//===- ReferenceExecutor.cpp - the oracle: plain loops for every op -------===//
//
// Runs a lazy graph with the most obvious C++ loops, one op at a time, on the
// CPU. It is slow on purpose: it is the reference every faster path (eager
// and compiled, CPU and GPU) is checked against, so each op reads like its
// definition. Elements are kept as doubles rounded to the node's dtype after
// every op (see Note [Reference precision]); reductions add in index order.
//
//===----------------------------------------------------------------------===//
#include "../Format.h"
#include "../PostOrder.h"
#include "../TensorImpl.h"
#include "common/philox.h"
#include "sinter/Distributed.h"
#include "sinter/Error.h"
#include "sinter/Reference.h"
#include "sinter/runtime/Communicator.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace sinter {
namespace {

using lazy::Node;
using lazy::Op;
using lazy::Value;

// Note [Reference precision]
// By default every result is rounded to its dtype, so the reference computes
// what a real f32/f16/bf16 kernel would (up to summation order). In high
// precision mode f32 results keep all 53 bits of a double: finite-difference
// gradient checks need that, and PyTorch's gradcheck runs in float64 too.
std::atomic<bool> highPrecision{false};

float roundToBf16(float x) {
  if (std::isnan(x))
    return x;
  uint32_t bits = std::bit_cast<uint32_t>(x);
  uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u); // to nearest, ties to even
  bits = (bits + rounding) & 0xFFFF0000u;
  return std::bit_cast<float>(bits);
}

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The coordinates of flat (row-major) index `index` in `shape`.
std::vector<int64_t> coordsOf(int64_t index, const Shape &shape) {
  std::vector<int64_t> coords(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
  return coords;
}

int64_t flatIndex(const std::vector<int64_t> &coords, const std::vector<int64_t> &strides) {
  int64_t index = 0;
  for (size_t d = 0; d < coords.size(); ++d)
    index += coords[d] * strides[d];
  return index;
}

const std::vector<double> &in(const Node &node, size_t i) {
  return node.operands[i]->value->elements();
}

// The values the op table's rows name (Note [The op table] in
// sinter/lazy/Ops.def).

/// a / b: integer division truncates, and by zero gives 0 (see sinter.div).
double quotient(DType dtype, double a, double b) {
  if (isFloatingPoint(dtype))
    return a / b;
  return b == 0 ? 0.0 : std::trunc(a / b);
}

/// NaN if either is, else the larger; smaller likewise.
double larger(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
}
double smaller(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::min(a, b);
}

/// `op` of two integers' (or bools', 0 and 1) bits.
template <typename BitOp> double bitwise(double a, double b, BitOp op) {
  return static_cast<double>(op(static_cast<int64_t>(a), static_cast<int64_t>(b)));
}

double unary(Op op, double x) {
  switch (op) {
#define SINTER_UNARY_OP(Name, mnemonic, operands, reference, ...)                                  \
  case Op::Name:                                                                                   \
    return reference;
#define SINTER_BINARY_OP(...)
#include "sinter/lazy/Ops.def"
  default:
    break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double binary(Op op, DType dtype, double a, double b) {
  switch (op) {
#define SINTER_UNARY_OP(...)
#define SINTER_BINARY_OP(Name, mnemonic, operands, reference, ...)                                 \
  case Op::Name:                                                                                   \
    return reference;
#include "sinter/lazy/Ops.def"
  default:
    break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool compare(lazy::CompareKind kind, double a, double b) {
  switch (kind) {
  case lazy::CompareKind::eq:
    return a == b;
  case lazy::CompareKind::ne:
    return a != b;
  case lazy::CompareKind::lt:
    return a < b;
  case lazy::CompareKind::le:
    return a <= b;
  case lazy::CompareKind::gt:
    return a > b;
  case lazy::CompareKind::ge:
    return a >= b;
  }
  return false;
}

/// out[i] for a result whose coordinates map to the operand through `map`.
template <typename MapFn>
void gatherByCoords(const Node &node, const Shape &operandShape, const std::vector<double> &src,
                    std::vector<double> &out, MapFn map) {
  std::vector<int64_t> operandStrides = stridesOf(operandShape);
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    std::vector<int64_t> coords = coordsOf(i, node.shape);
    out[i] = src[flatIndex(map(coords), operandStrides)];
  }
}

void checkIndex(const Node &node, double index, int64_t size, int64_t axis) {
  SINTER_CHECK(index >= 0 && index < size, node.loc,
               "index " + std::to_string(static_cast<int64_t>(index)) +
                   " is out of range for dimension " + std::to_string(axis) + " of size " +
                   std::to_string(size) + " (" + std::string(lazy::name(node.op)) + ")");
}

void matmul(const Node &node, std::vector<double> &out) {
  const Shape &lhsShape = node.operands[0]->shape, &rhsShape = node.operands[1]->shape;
  const std::vector<double> &lhs = in(node, 0), &rhs = in(node, 1);
  bool tl = node.attrs.flag, tr = node.attrs.flag2;
  int64_t rank = static_cast<int64_t>(lhsShape.size());
  int64_t m = node.shape[rank - 2], n = node.shape[rank - 1];
  int64_t k = tl ? lhsShape[rank - 2] : lhsShape[rank - 1];
  if (numel(node.shape) == 0)
    return;
  int64_t batch = numel(node.shape) / (m * n);
  bool sharedRhs = rhsShape.size() == 2 && rank > 2;
  // Each product reads op(a) as m x k and op(b) as k x n, row-major; the
  // sum over p runs in increasing order for every output element.
  std::vector<double> a(m * k), b(k * n);
  for (int64_t z = 0; z < batch; ++z) {
    const double *lhsBase = lhs.data() + z * m * k;
    const double *rhsBase = rhs.data() + (sharedRhs ? 0 : z * k * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        a[i * k + p] = tl ? lhsBase[p * m + i] : lhsBase[i * k + p];
    if (z == 0 || !sharedRhs)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
          b[p * n + j] = tr ? rhsBase[j * k + p] : rhsBase[p * n + j];
    double *c = out.data() + z * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        double aip = a[i * k + p];
        const double *bRow = b.data() + p * n;
        double *cRow = c + i * n;
        for (int64_t j = 0; j < n; ++j)
          cRow[j] += aip * bRow[j];
      }
  }
}

/// sum, max or argmax over the reduced dimensions, visiting the operand in
/// index order (so sums are deterministic and argmax picks the first max).
void reduce(const Node &node, std::vector<double> &out) {
  const lazy::Attrs &attrs = node.attrs;
  const Shape &operandShape = node.operands[0]->shape;
  const std::vector<double> &x = in(node, 0);
  std::vector<char> reduced(operandShape.size(), 0);
  if (node.op == Op::ArgMax)
    reduced[attrs.axis] = 1;
  else
    for (int64_t d : attrs.dims)
      reduced[d] = 1;
  Shape keptShape;
  for (size_t d = 0; d < operandShape.size(); ++d)
    keptShape.push_back(reduced[d] ? 1 : operandShape[d]);
  std::vector<int64_t> keptStrides = stridesOf(keptShape);
  std::vector<char> seen(out.size(), 0);
  std::vector<double> best(out.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    std::vector<int64_t> c = coordsOf(i, operandShape);
    int64_t position = c.empty() ? 0 : c[node.op == Op::ArgMax ? attrs.axis : 0];
    for (size_t d = 0; d < c.size(); ++d)
      if (reduced[d])
        c[d] = 0;
    int64_t o = flatIndex(c, keptStrides);
    if (node.op == Op::ReduceSum) {
      out[o] += x[i];
    } else if (!seen[o] || x[i] > best[o] || (std::isnan(x[i]) && !std::isnan(best[o]))) {
      seen[o] = 1;
      best[o] = x[i];
      out[o] = node.op == Op::ReduceMax ? x[i] : static_cast<double>(position);
    }
  }
}

/// Visits every (input, filter, output) index triple of a conv2d tap that
/// reads the input (padding taps are skipped). The three conv ops are the
/// same loop with different accumulations.
template <typename Visit>
void forEachConvTap(const Shape &input, const Shape &filter, const Shape &output,
                    const lazy::Attrs &attrs, Visit visit) {
  int64_t n = input[0], c = input[1], h = input[2], w = input[3];
  int64_t o = filter[0], cg = filter[1], kh = filter[2], kw = filter[3];
  int64_t oh = output[2], ow = output[3], groups = attrs.axis, og = o / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = y * attrs.dims[0] - attrs.dims2[0] + ky * attrs.dims3[0];
                int64_t ix = x * attrs.dims[1] - attrs.dims2[1] + kx * attrs.dims3[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                  continue;
                int64_t channel = (oc / og) * cg + ic;
                visit(((b * c + channel) * h + iy) * w + ix, ((oc * cg + ic) * kh + ky) * kw + kx,
                      ((b * o + oc) * oh + y) * ow + x);
              }
}

/// Visits every (input, output) index pair of a pooling window that reads
/// the input, in window order.
template <typename Visit>
void forEachPoolTap(const Shape &input, const Shape &output, const lazy::Attrs &attrs,
                    Visit visit) {
  int64_t planes = input[0] * input[1], h = input[2], w = input[3];
  int64_t oh = output[2], ow = output[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t ky = 0; ky < attrs.dims[0]; ++ky)
          for (int64_t kx = 0; kx < attrs.dims[1]; ++kx) {
            int64_t iy = y * attrs.dims2[0] - attrs.dims3[0] + ky;
            int64_t ix = x * attrs.dims2[1] - attrs.dims3[1] + kx;
            if (iy >= 0 && iy < h && ix >= 0 && ix < w)
              visit((p * h + iy) * w + ix, (p * oh + y) * ow + x);
          }
}

/// pool2d (backward = false) or its gradient: max routes each output's
/// gradient to the first largest element of its window; avg divides by the
/// window size (padding included, as PyTorch's default).
void pool(const Node &node, bool backward, std::vector<double> &out) {
  const lazy::Attrs &attrs = node.attrs;
  const Shape &inputShape = node.operands[0]->shape;
  Shape outputShape = backward ? node.operands[1]->shape : node.shape;
  const std::vector<double> &x = in(node, 0);
  double window = static_cast<double>(attrs.dims[0] * attrs.dims[1]);
  int64_t outputs = numel(outputShape);
  if (attrs.kind == 1) {
    forEachPoolTap(inputShape, outputShape, attrs, [&](int64_t i, int64_t o) {
      if (backward)
        out[i] += in(node, 1)[o] / window;
      else
        out[o] += x[i] / window;
    });
    return;
  }
  std::vector<int64_t> argmax(outputs, -1);
  forEachPoolTap(inputShape, outputShape, attrs, [&](int64_t i, int64_t o) {
    if (argmax[o] < 0 || x[i] > x[argmax[o]] || (std::isnan(x[i]) && !std::isnan(x[argmax[o]])))
      argmax[o] = i;
  });
  for (int64_t o = 0; o < outputs; ++o) {
    if (backward)
      out[argmax[o]] += in(node, 1)[o];
    else
      out[o] = x[argmax[o]];
  }
}

/// detail::roundTo over a whole result, with the dtype decided once.
void roundAll(DType dtype, std::vector<double> &values) {
  if (dtype == DType::f32) {
    if (!highPrecision.load(std::memory_order_relaxed))
      for (double &x : values)
        x = static_cast<float>(x);
    return;
  }
  for (double &x : values)
    x = detail::roundTo(dtype, x);
}

/// Computes one node whose operands are computed.
std::shared_ptr<const Value> compute(const Node &node) {
  std::vector<double> out(numel(node.shape), 0.0);
  const lazy::Attrs &attrs = node.attrs;
  switch (node.op) {
  case Op::Data:
    SINTER_CHECK(false, node.loc, "internal: a data node has no value");
    break;
  case Op::Full:
    std::fill(out.begin(), out.end(), attrs.value);
    break;
  case Op::Iota: {
    std::vector<int64_t> strides = stridesOf(node.shape);
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
      out[i] = static_cast<double>((i / strides[attrs.axis]) % node.shape[attrs.axis]);
    break;
  }
  case Op::Random: {
    auto key = static_cast<uint64_t>(in(node, 0)[0]);
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
      out[i] =
          attrs.kind == 0 ? kernels::philoxUniform(key, 0, i) : kernels::philoxNormal(key, 0, i);
    break;
  }
#define SINTER_UNARY_OP(Name, ...) case Op::Name:
#define SINTER_BINARY_OP(...)
#include "sinter/lazy/Ops.def"
    {
      const std::vector<double> &x = in(node, 0);
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = unary(node.op, x[i]);
      break;
    }
#define SINTER_UNARY_OP(...)
#define SINTER_BINARY_OP(Name, ...) case Op::Name:
#include "sinter/lazy/Ops.def"
    {
      const std::vector<double> &a = in(node, 0), &b = in(node, 1);
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = binary(node.op, node.dtype, a[i], b[i]);
      break;
    }
  case Op::Compare: {
    const std::vector<double> &a = in(node, 0), &b = in(node, 1);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = compare(static_cast<lazy::CompareKind>(attrs.kind), a[i], b[i]) ? 1.0 : 0.0;
    break;
  }
  case Op::Select: {
    const std::vector<double> &p = in(node, 0), &a = in(node, 1), &b = in(node, 2);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = p[i] != 0 ? a[i] : b[i];
    break;
  }
  case Op::Convert:
    out = in(node, 0);
    break;
  case Op::Broadcast: {
    const Shape &operandShape = node.operands[0]->shape;
    gatherByCoords(node, operandShape, in(node, 0), out, [&](const std::vector<int64_t> &c) {
      std::vector<int64_t> src(operandShape.size());
      for (size_t d = 0; d < src.size(); ++d)
        src[d] = operandShape[d] == 1 ? 0 : c[attrs.dims[d]];
      return src;
    });
    break;
  }
  case Op::Reshape:
    out = in(node, 0);
    break;
  case Op::Transpose: {
    const Shape &operandShape = node.operands[0]->shape;
    gatherByCoords(node, operandShape, in(node, 0), out, [&](const std::vector<int64_t> &c) {
      std::vector<int64_t> src(c.size());
      for (size_t d = 0; d < c.size(); ++d)
        src[attrs.dims[d]] = c[d];
      return src;
    });
    break;
  }
  case Op::Slice:
    gatherByCoords(node, node.operands[0]->shape, in(node, 0), out,
                   [&](const std::vector<int64_t> &c) {
                     std::vector<int64_t> src(c.size());
                     for (size_t d = 0; d < c.size(); ++d)
                       src[d] = attrs.dims[d] + c[d] * attrs.dims3[d];
                     return src;
                   });
    break;
  case Op::Concat: {
    std::vector<int64_t> outStrides = stridesOf(node.shape);
    int64_t offset = 0;
    for (size_t k = 0; k < node.operands.size(); ++k) {
      const Node &operand = *node.operands[k];
      const std::vector<double> &src = operand.value->elements();
      for (int64_t i = 0; i < static_cast<int64_t>(src.size()); ++i) {
        std::vector<int64_t> c = coordsOf(i, operand.shape);
        c[attrs.axis] += offset;
        out[flatIndex(c, outStrides)] = src[i];
      }
      offset += operand.shape[attrs.axis];
    }
    break;
  }
  case Op::Gather: {
    const Shape &operandShape = node.operands[0]->shape;
    const std::vector<double> &indices = in(node, 1);
    int64_t indexRank = static_cast<int64_t>(node.operands[1]->shape.size());
    std::vector<int64_t> indexStrides = stridesOf(node.operands[1]->shape);
    int64_t axis = attrs.axis;
    gatherByCoords(node, operandShape, in(node, 0), out, [&](const std::vector<int64_t> &c) {
      std::vector<int64_t> indexCoords(c.begin() + axis, c.begin() + axis + indexRank);
      double index = indices[flatIndex(indexCoords, indexStrides)];
      checkIndex(node, index, operandShape[axis], axis);
      std::vector<int64_t> src(c.begin(), c.begin() + axis);
      src.push_back(static_cast<int64_t>(index));
      src.insert(src.end(), c.begin() + axis + indexRank, c.end());
      return src;
    });
    break;
  }
  case Op::ScatterAdd: {
    out = in(node, 0);
    const Shape &updatesShape = node.operands[2]->shape;
    const std::vector<double> &indices = in(node, 1), &updates = in(node, 2);
    int64_t indexRank = static_cast<int64_t>(node.operands[1]->shape.size());
    std::vector<int64_t> indexStrides = stridesOf(node.operands[1]->shape);
    std::vector<int64_t> outStrides = stridesOf(node.shape);
    int64_t axis = attrs.axis;
    for (int64_t i = 0; i < static_cast<int64_t>(updates.size()); ++i) {
      std::vector<int64_t> c = coordsOf(i, updatesShape);
      std::vector<int64_t> indexCoords(c.begin() + axis, c.begin() + axis + indexRank);
      double index = indices[flatIndex(indexCoords, indexStrides)];
      checkIndex(node, index, node.shape[axis], axis);
      std::vector<int64_t> dst(c.begin(), c.begin() + axis);
      dst.push_back(static_cast<int64_t>(index));
      dst.insert(dst.end(), c.begin() + axis + indexRank, c.end());
      out[flatIndex(dst, outStrides)] += updates[i];
    }
    break;
  }
  case Op::ReduceSum:
  case Op::ReduceMax:
  case Op::ArgMax:
    reduce(node, out);
    break;
  case Op::Matmul:
    matmul(node, out);
    break;
  case Op::Conv2d: {
    const std::vector<double> &x = in(node, 0), &w = in(node, 1);
    forEachConvTap(node.operands[0]->shape, node.operands[1]->shape, node.shape, attrs,
                   [&](int64_t i, int64_t f, int64_t o) { out[o] += x[i] * w[f]; });
    break;
  }
  case Op::Conv2dBackwardInput: {
    const std::vector<double> &g = in(node, 0), &w = in(node, 1);
    forEachConvTap(node.shape, node.operands[1]->shape, node.operands[0]->shape, attrs,
                   [&](int64_t i, int64_t f, int64_t o) { out[i] += w[f] * g[o]; });
    break;
  }
  case Op::Conv2dBackwardFilter: {
    const std::vector<double> &x = in(node, 0), &g = in(node, 1);
    forEachConvTap(node.operands[0]->shape, node.shape, node.operands[1]->shape, attrs,
                   [&](int64_t i, int64_t f, int64_t o) { out[f] += x[i] * g[o]; });
    break;
  }
  case Op::Pool2d:
    pool(node, false, out);
    break;
  case Op::Pool2dBackward:
    pool(node, true, out);
    break;
  case Op::AllReduce:
  case Op::ReduceScatter:
  case Op::AllGather: {
    // In doubles, as everything here: the values are already rounded to
    // their dtype, and the sum is rounded once at the end.
    std::string_view what = lazy::name(node.op);
    runtime::Communicator *communicator = distributed::detail::current_communicator();
    SINTER_CHECK(communicator != nullptr, node.loc,
                 cat(what, ": the step runs without a process group "
                           "(sinter::distributed::init_process_group())"));
    SINTER_CHECK(node.op == Op::AllReduce || attrs.axis == communicator->size(), node.loc,
                 cat(what, ": recorded for a world of ", attrs.axis, ", run in a world of ",
                     communicator->size()));
    const std::vector<double> &x = in(node, 0);
    auto op = static_cast<runtime::ReduceOp>(attrs.kind);
    runtime::ReduceOp sum = op == runtime::ReduceOp::Mean ? runtime::ReduceOp::Sum : op;
    auto count = static_cast<int64_t>(x.size());
    runtime::Communicator::Ticket ticket;
    if (node.op == Op::AllReduce) {
      out = x;
      ticket = communicator->allReduce(out.data(), count, runtime::ElementType::F64, sum,
                                       std::string(what));
    } else if (node.op == Op::ReduceScatter) {
      out.resize(x.size() / static_cast<size_t>(communicator->size()));
      ticket = communicator->reduceScatter(x.data(), out.data(), static_cast<int64_t>(out.size()),
                                           runtime::ElementType::F64, sum, std::string(what));
    } else {
      out.resize(x.size() * static_cast<size_t>(communicator->size()));
      ticket = communicator->allGather(
          x.data(), out.data(), count * static_cast<int64_t>(sizeof(double)), std::string(what));
    }
    Status status = communicator->wait(ticket);
    SINTER_CHECK(status.ok(), node.loc, std::string(status.message()));
    if (node.op != Op::AllGather && op == runtime::ReduceOp::Mean)
      for (double &value : out)
        value /= communicator->size();
    break;
  }
  }
  roundAll(node.dtype, out);
  return std::make_shared<Value>(std::move(out), node.dtype);
}

} // namespace

/// The integer a double truncates to, modulo 2^64 (two's complement wrap, as
/// integer arithmetic on the device does); NaN and infinities give 0. Casting
/// an out-of-range double directly would be undefined behaviour.
static uint64_t wrapToUint64(double x) {
  if (!std::isfinite(x))
    return 0;
  constexpr double kTwo63 = 9223372036854775808.0, kTwo64 = 2 * kTwo63;
  if (x > -kTwo63 && x < kTwo63) // exact, and the common case
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  // Beyond 2^63 a double is a multiple of 2^11, so the remainder is exact.
  double t = std::fmod(std::trunc(x), kTwo64);
  if (t < 0)
    t += kTwo64;
  return t >= kTwo64 ? 0 : static_cast<uint64_t>(t);
}

double detail::roundTo(DType dtype, double x) {
  switch (dtype) {
  case DType::f32:
    return highPrecision.load(std::memory_order_relaxed) ? x : static_cast<float>(x);
  case DType::f16:
    return static_cast<double>(static_cast<_Float16>(static_cast<float>(x)));
  case DType::bf16:
    return roundToBf16(static_cast<float>(x));
  case DType::i32:
    return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(wrapToUint64(x))));
  case DType::i64:
    return static_cast<double>(static_cast<int64_t>(wrapToUint64(x)));
  case DType::boolean:
    return x != 0 ? 1.0 : 0.0;
  }
  return x;
}

/// The nodes `roots` need that have no value yet, operands first; computed
/// nodes (and what only they need) are skipped.
static std::vector<Node *> uncomputed(const std::vector<Node *> &roots) {
  return detail::postOrder(roots, [](Node *node, auto visit) {
    for (const lazy::NodePtr &operand : node->operands)
      if (!operand->value)
        visit(operand.get());
  });
}

std::shared_ptr<const Value> detail::evaluate(const Tensor &tensor) {
  GraphStep hold;
  Node *root = tensor.impl()->node.get();
  if (root->value)
    return root->value;
  for (Node *node : uncomputed({root}))
    node->value = compute(*node);
  return root->value;
}

// Note [The reference step frees what it no longer needs]
// A step's graph is cut once its outputs are computed, so the value of a
// node that no tensor, no other graph and no output holds is needed only
// until its last consumer in the step has run. Keeping every such value to
// the end made the reference step of gpt-mini at batch 52 peak at 22 GB
// (doubles for every intermediate). A node may be freed when every
// reference to it comes from a consumer computed in this pass (its use
// count says nobody else holds it): then it cannot be read again before the
// graph is cut. Freed values are the same as kept ones, only earlier; what
// is held outside the step (a tensor the user kept, a node of another graph)
// keeps its value, as before.
void detail::evaluateStep(const std::vector<lazy::NodePtr> &outputs) {
  std::vector<Node *> roots;
  for (const lazy::NodePtr &output : outputs)
    if (!output->value)
      roots.push_back(output.get());
  std::vector<Node *> pending = uncomputed(roots);
  // Per pending operand: its references from pending consumers (counted
  // down as they run), and all the references it has.
  struct Uses {
    long consumers = 0;
    long references = 0;
  };
  std::unordered_map<const Node *, Uses> uses;
  for (Node *node : pending)
    for (const lazy::NodePtr &operand : node->operands)
      if (!operand->value) {
        Uses &u = uses[operand.get()];
        ++u.consumers;
        u.references = operand.use_count();
      }
  std::unordered_set<const Node *> kept(roots.begin(), roots.end());
  for (const auto &[node, u] : uses)
    if (u.references > u.consumers)
      kept.insert(node);
  for (Node *node : pending) {
    node->value = compute(*node);
    for (const lazy::NodePtr &operand : node->operands) {
      auto it = uses.find(operand.get());
      if (it != uses.end() && --it->second.consumers == 0 && !kept.count(operand.get()))
        operand->value.reset();
    }
  }
}

namespace reference {

HighPrecisionGuard::HighPrecisionGuard() : previous_(highPrecision.exchange(true)) {}
HighPrecisionGuard::~HighPrecisionGuard() { highPrecision.store(previous_); }

} // namespace reference
} // namespace sinter
