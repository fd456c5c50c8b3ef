//===- Pointwise.h - the pointwise ops, as each renderer writes them ------===//
//
// Note [One table of pointwise ops]
// A pointwise op (a value computed at its own index from its operands there)
// is written for both renderers from the op table's `cpu` and `cuda` columns
// (Note [The op table] in sinter/lazy/Ops.def): the CPU's C++ (std:: math,
// libmvec-friendly helpers) and the CUDA C++ that NVRTC compiles (the CUDA
// math API's float functions; no standard headers there), with the helpers
// of kernels/common/scalar.h shared. The ops the table does not hold
// (compare, select and convert: an attribute, three operands, two dtypes)
// are written here. An op neither knows is written by neither, so a
// renderer refuses it (an UnsupportedOp problem) rather than writing
// something else.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RENDERERS_POINTWISE_H
#define SINTER_RENDERERS_POINTWISE_H

#include "sinter/Codegen/KernelPlan.h"

#include <functional>
#include <string>

namespace sinter::codegen {

enum class Dialect { Cpu, Cuda };

/// A splat constant's value as a literal of element type `t` (a half
/// storage type's literal is a float, Note [Half precision in kernels]).
std::string literalText(Dialect dialect, const KernelPlan::Value &value, const std::string &t);

/// The text of `value` (of element type `t`; its first operand's type
/// `operandType`) computed at its own index from its operands there
/// (`arg(k)`), or "" when `value` is not a pointwise op. Half values are
/// computed in f32 (Note [Half precision in kernels]): the text is the
/// float one, and the value's own local or function of `t` rounds it.
std::string pointwiseText(Dialect dialect, const KernelPlan::Value &value, const std::string &t,
                          const std::string &operandType,
                          const std::function<std::string(unsigned)> &arg);

} // namespace sinter::codegen

#endif // SINTER_RENDERERS_POINTWISE_H
