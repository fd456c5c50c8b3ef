//===- Primitives.h - recording the dialect's ops, with their gradients ---===//
//
// One function per primitive op of the lazy graph (the `sinter` dialect's op
// set). Each checks nothing the caller has not already checked about the
// user's request (that is Ops.cpp's job, with messages in the user's terms),
// records the node, and attaches the op's gradient formula, written with
// other primitives. Every composite op's gradient follows from these.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_LIB_OPS_PRIMITIVES_H
#define SINTER_LIB_OPS_PRIMITIVES_H

#include "../TensorImpl.h"

namespace sinter::prim {

Tensor unary(lazy::Op op, const Tensor &x, Loc loc);
/// REQUIRES: a and b have the same shape and dtype.
Tensor binary(lazy::Op op, const Tensor &a, const Tensor &b, Loc loc);
/// REQUIRES: a and b have the same shape and dtype.
Tensor compare(lazy::CompareKind kind, const Tensor &a, const Tensor &b, Loc loc);
/// REQUIRES: pred is bool; pred, a, b have one shape; a and b one dtype.
Tensor select(const Tensor &pred, const Tensor &a, const Tensor &b, Loc loc);
Tensor convert(const Tensor &x, DType dtype, Loc loc);
/// Operand dim i becomes result dim dims[i] (size 1 repeats).
Tensor broadcast(const Tensor &x, const Shape &shape, std::vector<int64_t> dims, Loc loc);
Tensor reshape(const Tensor &x, const Shape &shape, Loc loc);
/// Result dim i is operand dim perm[i].
Tensor transpose(const Tensor &x, std::vector<int64_t> perm, Loc loc);
Tensor slice(const Tensor &x, std::vector<int64_t> start, std::vector<int64_t> limit,
             std::vector<int64_t> step, Loc loc);
Tensor concat(const std::vector<Tensor> &xs, int64_t axis, Loc loc);
Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis, Loc loc);
Tensor scatterAdd(const Tensor &x, const Tensor &indices, const Tensor &updates, int64_t axis,
                  Loc loc);
Tensor reduceSum(const Tensor &x, std::vector<int64_t> dims, bool keepdim, Loc loc);
Tensor reduceMax(const Tensor &x, std::vector<int64_t> dims, bool keepdim, Loc loc);
Tensor argmax(const Tensor &x, int64_t axis, bool keepdim, Loc loc);
/// `kind`: a runtime::ReduceOp (sum, mean, max, min), over the process group.
Tensor allReduce(const Tensor &x, int kind, Loc loc);
/// Collectives of 1-D tensors in a world of `ranks` (sinter.reduce_scatter,
/// sinter.all_gather): `kind` is a runtime::ReduceOp.
Tensor reduceScatter(const Tensor &x, int kind, int64_t ranks, Loc loc);
Tensor allGather(const Tensor &x, int64_t ranks, Loc loc);
/// Batched matmul of the last two dims; rhs may be a shared matrix.
Tensor matmul(const Tensor &a, const Tensor &b, bool transposeA, bool transposeB, Loc loc);
/// The attributes of a 2-D convolution ([h, w] pairs).
struct ConvParams {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};
/// REQUIRES: shapes and attributes checked (see F::conv2d).
Tensor conv2d(const Tensor &input, const Tensor &filter, const ConvParams &params, Loc loc);
struct PoolParams {
  bool max = true;
  std::vector<int64_t> kernel, stride, padding;
};
Tensor pool2d(const Tensor &input, const PoolParams &params, Loc loc);

/// A constant of `like`'s shape and dtype.
Tensor fullLike(const Tensor &like, double value, Loc loc);
/// A gradient-free handle on a result's node, for the gradient function the
/// result owns (Note [Results in gradient functions] in Primitives.cpp).
Tensor resultOf(const lazy::NodePtr &node);
Tensor iota(const Shape &shape, int64_t axis, DType dtype, Loc loc);

} // namespace sinter::prim

#endif // SINTER_LIB_OPS_PRIMITIVES_H
