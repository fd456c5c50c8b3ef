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
#define SINTER_UNARY_OP(Name, mnemonic, ...)                                                       \
  case Op::Name:                                                                                   \
    return mnemonic;
#define SINTER_BINARY_OP SINTER_UNARY_OP
#include "sinter/lazy/Ops.def"
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

std::optional<Operands> operandsOf(Op op) {
  switch (op) {
#define SINTER_UNARY_OP(Name, mnemonic, operands, ...)                                             \
  case Op::Name:                                                                                   \
    return Operands::operands;
#define SINTER_BINARY_OP SINTER_UNARY_OP
#include "sinter/lazy/Ops.def"
  default:
    return std::nullopt;
  }
}

bool accepts(Operands operands, DType dtype) {
  switch (operands) {
  case Operands::Float:
    return isFloatingPoint(dtype);
  case Operands::Numeric:
    return dtype != DType::boolean;
  case Operands::Bool:
    return dtype == DType::boolean;
  case Operands::Logical:
    return dtype == DType::boolean || !isFloatingPoint(dtype);
  }
  return false;
}

std::string_view describe(Operands operands) {
  switch (operands) {
  case Operands::Float:
    return "a floating-point tensor";
  case Operands::Numeric:
    return "a numeric (not bool) tensor";
  case Operands::Bool:
    return "a bool tensor";
  case Operands::Logical:
    return "a bool or integer tensor";
  }
  return "?";
}

} // namespace sinter::lazy
