//===- Pointwise.cpp - the pointwise ops, as each renderer writes them ----===//
//
// See Note [One table of pointwise ops] in Pointwise.h.
//
//===----------------------------------------------------------------------===//
#include "Pointwise.h"

#include "sinter/Codegen/CpuRenderer.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

namespace sinter::codegen {
namespace {

/// What the renderer columns of the op table write from (Note [The op
/// table] in sinter/lazy/Ops.def): the dialect, the value's compute type
/// and its operands' texts.
struct Spelling {
  bool cuda;
  std::string t;
  std::vector<std::string> args;

  /// `rule` with `%k` replaced by the k-th operand's text (tinygrad's table
  /// of renderings).
  std::string fill(const std::string &rule) const {
    std::string text;
    for (size_t i = 0; i < rule.size(); ++i) {
      if (rule[i] == '%' && i + 1 < rule.size() && rule[i + 1] >= '0' && rule[i + 1] <= '9') {
        text += args[rule[++i] - '0'];
        continue;
      }
      text += rule[i];
    }
    return text;
  }
};

// The texts that depend on the element type, as the table's rows name them.

std::string cudaAbs(const Spelling &s) {
  return (s.t == "float" ? "fabsf(" : s.t == "int64_t" ? "llabs(" : "abs(") + s.args[0] + ")";
}

std::string quotientText(const Spelling &s) {
  const std::string &t = s.t;
  if (t == "float")
    return s.args[0] + " / " + s.args[1];
  // Integer division by zero gives 0, as the reference executor, and the
  // lowest value over -1 wraps to itself (-fwrapv) where the division
  // instruction would trap: a select computes both arms
  // (sinter_select), so no division may trap.
  return "[&] { " + t + " a = " + s.args[0] + ", b = " + s.args[1] + "; return b == 0 ? " + t +
         "(0) : b == -1 ? -a : a / b; }()";
}

/// max (cmp " > ") or min (" < "): NaN if either is; ties keep a, as
/// std::max / std::min (visible on -0.0 and +0.0).
std::string pickText(const Spelling &s, const char *cmp) {
  std::string pick = "[&] { " + s.t + " a = " + s.args[0] + ", b = " + s.args[1] + "; ";
  if (s.t == "float")
    pick += s.cuda ? "if (a != a || b != b) return __uint_as_float(0x7fc00000u); "
                   : "if (a != a || b != b) return NAN; ";
  return pick + "return b" + cmp + "a ? b : a; }()";
}

/// Logical on bools, bitwise on integers.
std::string bitwiseText(const Spelling &s, const char *logical, const char *bits) {
  return s.args[0] + (s.t == "bool" ? logical : bits) + s.args[1];
}

/// The op table's ops by mnemonic, with their CPU and CUDA texts.
struct Writers {
  std::string (*cpu)(const Spelling &);
  std::string (*cuda)(const Spelling &);
};

const std::map<std::string, Writers> &writers() {
  // clang-format off
  static const std::map<std::string, Writers> table = {
#define SINTER_UNARY_OP(Name, mnemonic, operands, reference, cpu, cuda, ...)                     \
  {mnemonic, {[](const Spelling &s) { return std::string(cpu); },                                 \
              [](const Spelling &s) { return std::string(cuda); }}},
#define SINTER_BINARY_OP SINTER_UNARY_OP
#include "sinter/lazy/Ops.def"
  };
  // clang-format on
  return table;
}

} // namespace

std::string literalText(Dialect dialect, const KernelPlan::Value &value,
                        const std::string &element) {
  const std::string t = cppComputeTypeOf(element);
  const bool cuda = dialect == Dialect::Cuda;
  if (isFloatDtype(value.dtype)) { // f16 and bf16 constants are written in f32
    double v = value.number;
    if (std::isnan(v))
      return cuda ? "__uint_as_float(0x7fc00000u)" : "NAN";
    if (std::isinf(v))
      return cuda ? (v < 0 ? "__uint_as_float(0xff800000u)" : "__uint_as_float(0x7f800000u)")
                  : (v < 0 ? "-INFINITY" : "INFINITY");
    char text[32];
    std::snprintf(text, sizeof text, "%.9e", v);
    return std::string(text) + "f";
  }
  if (t == "bool")
    return value.integer == 0 ? "false" : "true";
  return "static_cast<" + t + ">(" + std::to_string(value.integer) + "LL)";
}

std::string pointwiseText(Dialect dialect, const KernelPlan::Value &value,
                          const std::string &element, const std::string &operandElement,
                          const std::function<std::string(unsigned)> &arg) {
  const std::string t = cppComputeTypeOf(element), operandType = cppComputeTypeOf(operandElement);
  const std::string &op = value.op;
  const bool cuda = dialect == Dialect::Cuda;
  auto writer = writers().find(op);
  if (writer != writers().end()) {
    Spelling spelling{cuda, t, {}};
    for (unsigned k = 0; k < value.operands.size(); ++k)
      spelling.args.push_back(arg(k));
    return cuda ? writer->second.cuda(spelling) : writer->second.cpu(spelling);
  }
  if (op == "compare") {
    static const std::map<std::string, std::string> operators = {{"eq", " == "}, {"ne", " != "},
                                                                 {"lt", " < "},  {"le", " <= "},
                                                                 {"gt", " > "},  {"ge", " >= "}};
    auto it = operators.find(value.direction);
    return it == operators.end() ? "" : arg(0) + it->second + arg(1);
  }
  if (op == "select")
    return "sinter_select<" + t + ">(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ")";
  if (op == "convert") {
    if (t == "bool")
      return arg(0) + " != 0";
    bool fromFloat = operandType == "float";
    if (t == "float" || !fromFloat)
      return "static_cast<" + t + ">(" + arg(0) + ")";
    std::string u = t == "int32_t" ? "uint32_t" : "uint64_t";
    return "static_cast<" + t + ">(static_cast<" + u + ">(sinter_wrap(" + arg(0) + ")))";
  }
  return "";
}

} // namespace sinter::codegen
