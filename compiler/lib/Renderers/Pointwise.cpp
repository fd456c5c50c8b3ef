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

/// How each op whose text does not depend on the element type is written,
/// per dialect: `%0`, `%1`, `%2` stand for its operands (tinygrad's table of
/// renderings; the ops whose text depends on the element type are written
/// in pointwiseText).
struct Rule {
  const char *cpu;
  const char *cuda;
};

const std::map<std::string, Rule> &rules() {
  static const std::map<std::string, Rule> table = {
      {"neg", {"-%0", "-%0"}},
      {"exp", {"sinter_exp(%0)", "sinter_exp(%0)"}},
      {"log", {"std::log(%0)", "logf(%0)"}},
      {"tanh", {"std::tanh(%0)", "tanhf(%0)"}},
      {"sqrt", {"std::sqrt(%0)", "sqrtf(%0)"}},
      {"rsqrt", {"1.0f / std::sqrt(%0)", "1.0f / sqrtf(%0)"}},
      {"sigmoid", {"1.0f / (1.0f + sinter_exp(-%0))", "1.0f / (1.0f + sinter_exp(-%0))"}},
      {"erf", {"std::erf(%0)", "erff(%0)"}},
      {"sin", {"std::sin(%0)", "sinf(%0)"}},
      {"cos", {"std::cos(%0)", "cosf(%0)"}},
      {"not", {"!%0", "!%0"}},
      {"add", {"%0 + %1", "%0 + %1"}},
      {"sub", {"%0 - %1", "%0 - %1"}},
      {"mul", {"%0 * %1", "%0 * %1"}},
      {"pow", {"std::pow(%0, %1)", "powf(%0, %1)"}},
  };
  return table;
}

/// `rule` with `%k` replaced by `args[k]`.
std::string substitute(const std::string &rule, const std::vector<std::string> &args) {
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
  if (op == "abs") {
    if (!cuda)
      return "std::abs(" + arg(0) + ")";
    return (t == "float" ? "fabsf(" : t == "int64_t" ? "llabs(" : "abs(") + arg(0) + ")";
  }
  auto rule = rules().find(op);
  if (rule != rules().end()) {
    std::vector<std::string> args;
    for (unsigned k = 0; k < value.operands.size(); ++k)
      args.push_back(arg(k));
    return substitute(cuda ? rule->second.cuda : rule->second.cpu, args);
  }
  if (op == "div") {
    if (t == "float")
      return arg(0) + " / " + arg(1);
    // Integer division by zero gives 0, as the reference executor, and the
    // lowest value over -1 wraps to itself (-fwrapv) where the division
    // instruction would trap: a select computes both arms
    // (sinter_select), so no division may trap.
    return "[&] { " + t + " a = " + arg(0) + ", b = " + arg(1) + "; return b == 0 ? " + t +
           "(0) : b == -1 ? -a : a / b; }()";
  }
  if (op == "max" || op == "min") {
    // Ties keep a, as std::max / std::min (visible on -0.0 and +0.0).
    std::string cmp = op == "max" ? " > " : " < ";
    std::string pick = "[&] { " + t + " a = " + arg(0) + ", b = " + arg(1) + "; ";
    if (t == "float")
      pick += cuda ? "if (a != a || b != b) return __uint_as_float(0x7fc00000u); "
                   : "if (a != a || b != b) return NAN; ";
    return pick + "return b" + cmp + "a ? b : a; }()";
  }
  // Bitwise on integers, logical on bools.
  if (op == "and")
    return t == "bool" ? arg(0) + " && " + arg(1) : arg(0) + " & " + arg(1);
  if (op == "or")
    return t == "bool" ? arg(0) + " || " + arg(1) : arg(0) + " | " + arg(1);
  if (op == "xor")
    return t == "bool" ? arg(0) + " != " + arg(1) : arg(0) + " ^ " + arg(1);
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
