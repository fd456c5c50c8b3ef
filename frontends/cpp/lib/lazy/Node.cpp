//===- Node.cpp - the lazy graph ------------------------------------------===//
#include "sinter/lazy/Node.h"

namespace sinter::lazy {

std::string_view name(Op op) {
  switch (op) {
  case Op::Data:
    return "data";
  case Op::Full:
    return "full";
  case Op::Iota:
    return "iota";
  case Op::Random:
    return "random";
  case Op::Neg:
    return "neg";
  case Op::Abs:
    return "abs";
  case Op::Exp:
    return "exp";
  case Op::Log:
    return "log";
  case Op::Tanh:
    return "tanh";
  case Op::Sqrt:
    return "sqrt";
  case Op::Rsqrt:
    return "rsqrt";
  case Op::Sigmoid:
    return "sigmoid";
  case Op::Erf:
    return "erf";
  case Op::Not:
    return "not";
  case Op::Add:
    return "add";
  case Op::Sub:
    return "sub";
  case Op::Mul:
    return "mul";
  case Op::Div:
    return "div";
  case Op::Max:
    return "max";
  case Op::Min:
    return "min";
  case Op::Pow:
    return "pow";
  case Op::And:
    return "and";
  case Op::Or:
    return "or";
  case Op::Compare:
    return "compare";
  case Op::Select:
    return "select";
  case Op::Convert:
    return "convert";
  case Op::Broadcast:
    return "broadcast_in_dim";
  case Op::Reshape:
    return "reshape";
  case Op::Transpose:
    return "transpose";
  case Op::Slice:
    return "slice";
  case Op::Concat:
    return "concat";
  case Op::Gather:
    return "gather";
  case Op::ScatterAdd:
    return "scatter_add";
  case Op::ReduceSum:
    return "reduce_sum";
  case Op::ReduceMax:
    return "reduce_max";
  case Op::ArgMax:
    return "argmax";
  case Op::Matmul:
    return "matmul";
  case Op::Conv2d:
    return "conv2d";
  case Op::Conv2dBackwardInput:
    return "conv2d_backward_input";
  case Op::Conv2dBackwardFilter:
    return "conv2d_backward_filter";
  case Op::Pool2d:
    return "pool2d";
  case Op::Pool2dBackward:
    return "pool2d_backward";
  case Op::AllReduce:
    return "all_reduce";
  case Op::ReduceScatter:
    return "reduce_scatter";
  case Op::AllGather:
    return "all_gather";
  }
  return "?";
}

} // namespace sinter::lazy
