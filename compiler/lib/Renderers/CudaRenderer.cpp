//===- CudaRenderer.cpp - a kernel plan as a CUDA C++ kernel --------------===//
//
// See Note [The CUDA renderer] in sinter/Codegen/CudaRenderer.h. Like the
// CPU renderer it reads the kernel plan and nothing else (no MLIR).
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CudaRenderer.h"

#include "Pointwise.h"

#include <algorithm>
#include <locale>
#include <sstream>
#include <vector>

namespace sinter::codegen {
namespace {

constexpr int64_t kThreads = 256;
constexpr int64_t kWarps = kThreads / 32;
constexpr int64_t kMaxBlocks = 65535;

class CudaRenderer {
public:
  explicit CudaRenderer(const KernelPlan &plan) : plan(plan) { os.imbue(std::locale::classic()); }

  std::string text() const { return os.str(); }

  std::optional<RenderProblem> render(const std::string &name, runtime::LaunchShape &shape) {
    rowMode = plan.kind == KernelPlan::Kind::Rows;
    if (plan.kind == KernelPlan::Kind::PerResult)
      return RenderProblem{RenderProblem::Kind::UnsupportedOp, -1};
    std::vector<std::string> parameters, casts;
    // A result the planner may write over an input (Note [In-place kernels])
    // aliases it: neither is __restrict__.
    auto aliased = [&](bool input, size_t index) {
      for (const auto &[in, out] : plan.inPlace)
        if ((input ? in : out) == index)
          return true;
      return false;
    };
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      std::string t = cppElementTypeOf(plan.inputs[i].dtype);
      if (t.empty())
        return RenderProblem{RenderProblem::Kind::UnsupportedType, -1 - static_cast<int>(i)};
      parameters.push_back("const " + t + (aliased(true, i) ? " *in" : " *__restrict__ in") +
                           std::to_string(i));
      casts.push_back("static_cast<const " + t + " *>(buffers[" + std::to_string(i) + "])");
    }
    for (size_t k = 0; k < plan.results.size(); ++k) {
      std::string t = typeOf(plan.results[k].value);
      if (t.empty())
        return RenderProblem{RenderProblem::Kind::UnsupportedType, plan.results[k].value};
      parameters.push_back(t + (aliased(false, k) ? " *out" : " *__restrict__ out") +
                           std::to_string(k));
      casts.push_back("static_cast<" + t + " *>(buffers[" + std::to_string(plan.inputs.size() + k) +
                      "])");
    }
    // An elementwise plan's stored values are recomputed where read; a row
    // plan's scratch (its row values) lives in registers: no scratch here.
    if (!rowMode && !plan.scratchBytes.empty())
      return RenderProblem{RenderProblem::Kind::UnsupportedOp, -1};
    names.assign(plan.values.size(), "");
    body << "extern \"C\" __global__ void " << name << "(";
    for (size_t p = 0; p < parameters.size(); ++p)
      body << (p ? ", " : "") << parameters[p];
    body << ") {\n";
    shape = {};
    shape.block[0] = kThreads;
    if (rowMode) {
      if (std::optional<RenderProblem> problem = renderRows())
        return problem;
      shape.grid[0] = std::clamp<int64_t>((plan.rows + kWarps - 1) / kWarps, 1, kMaxBlocks);
    } else {
      for (int v = 0; v < static_cast<int>(plan.values.size()); ++v)
        if (std::optional<RenderProblem> problem = emit(v))
          return problem;
      int64_t n = plan.results.empty() ? 0 : elements(plan.results[0].value);
      for (int part = 0; part < plan.parts; ++part) {
        body << "  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; "
                "i < "
             << n << "; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {\n";
        for (size_t k = 0; k < plan.results.size(); ++k)
          if (plan.results[k].part == part)
            body << "    out" << k << "[i] = " << call(plan.results[k].value, "i") << ";\n";
        body << "  }\n";
      }
      shape.grid[0] = std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks);
    }
    body << "}\n";
    os << body.str();
    // The simulator's entry (Note [The CUDA renderer]).
    // A row kernel's warp operations need the simulator's fibers.
    os << "#ifdef SINTER_SIMULATED\nextern \"C\" void " << name
       << "_simulate(const void *shape, const void *options, void *const *buffers, void *status) "
          "{\n  ::sinter::simt::Options run = *static_cast<const ::sinter::simt::Options "
          "*>(options);\n"
       << (rowMode ? "  run.fibers = true;\n" : "")
       << "  *static_cast<::sinter::Status *>(status) = sinter_simulate(\"" << name << "\", "
       << name << ", *static_cast<const ::sinter::runtime::LaunchShape *>(shape), run";
    for (const std::string &cast : casts)
      os << ",\n      " << cast;
    os << ");\n}\n#endif\n";
    return std::nullopt;
  }

private:
  std::string typeOf(int v) const { return cppElementTypeOf(plan.dtypeOf(v)); }
  int64_t elements(int v) const { return plan.elementsOf(v); }

  /// `v` read at element `index`.
  std::string call(int v, const std::string &index) const {
    if (v < 0) {
      std::string buffer = "in" + std::to_string(-1 - v);
      if (typeOf(v) == "bool")
        return "(reinterpret_cast<const uint8_t *>(" + buffer + ")[" + index + "] != 0)";
      return buffer + "[" + index + "]";
    }
    return names[v] + "(" + index + ")";
  }

  /// Declares `v` as a device lambda of its index, `return`ing `text`.
  void define(int v, const std::string &text, bool usesIndex = true) {
    names[v] = "v" + std::to_string(v);
    body << "  auto " << names[v] << " = [&](int64_t i) -> " << typeOf(v) << " {\n";
    if (!usesIndex)
      body << "    (void)i;\n";
    body << text << "  };\n";
  }

  /// The coordinates y0.. of element `i` of `shape`, as statements.
  static std::string coordinates(const std::vector<int64_t> &shape) {
    std::string text = "    uint64_t rest = static_cast<uint64_t>(i);\n";
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
      text += "    const int64_t y" + std::to_string(d) + " = static_cast<int64_t>(rest % " +
              std::to_string(shape[d]) + "u); rest /= " + std::to_string(shape[d]) + "u;\n";
    return text + "    (void)rest;\n";
  }

  std::optional<RenderProblem> emit(int v) {
    const KernelPlan::Value &value = plan.values[v];
    if (value.dtype.empty())
      return RenderProblem{RenderProblem::Kind::SeveralResults, v};
    std::string t = typeOf(v);
    if (t.empty())
      return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
    const bool reduction = value.op == "reduce_sum" || value.op == "reduce_max";
    if (reduction && rowMode && value.reduction == KernelPlan::Reduction::Row)
      return emitRowReduction(v, value.op == "reduce_sum", t);
    // Stored values are recomputed where read (a row value is the one
    // exception, above).
    if (reduction || !value.reducedDims.empty() ||
        (!rowMode && (value.storage == KernelPlan::Storage::Scratch ||
                      value.storage == KernelPlan::Storage::RowStack)))
      return RenderProblem{RenderProblem::Kind::UnsupportedOp, v};
    if (value.op == "constant") {
      if (!value.splat)
        return RenderProblem{RenderProblem::Kind::UnsupportedOp, v};
      define(v, "    return " + literalText(Dialect::Cuda, value, t) + ";\n", false);
      return std::nullopt;
    }
    if (value.hasIndexMap) {
      // A layout op: its operand at offset + sum of coordinate x stride.
      if (value.operands.size() != 1)
        return RenderProblem{RenderProblem::Kind::UnsupportedOp, v};
      std::string index = std::to_string(value.map.offset);
      for (size_t d = 0; d < value.map.strides.size(); ++d)
        if (value.map.strides[d] != 0)
          index += " + y" + std::to_string(d) + " * " + std::to_string(value.map.strides[d]);
      define(v, coordinates(value.shape) + "    return " + call(value.operands[0], index) + ";\n");
      return std::nullopt;
    }
    if (value.op == "iota") {
      define(v, coordinates(value.shape) + "    return static_cast<" + t + ">(y" +
                    std::to_string(value.dims.at(0)) + ");\n");
      return std::nullopt;
    }
    if (value.op == "random") {
      // Philox keyed by (seed, stream, element index): the CPU's numbers.
      define(v, "    const uint64_t seed = static_cast<uint64_t>(" + call(value.operands[0], "0") +
                    ");\n    return sinter::kernels::" +
                    (value.distribution == "uniform" ? "philoxUniform" : "philoxNormal") +
                    "(seed, " + std::to_string(value.stream) + "ULL, static_cast<uint64_t>(i));\n");
      return std::nullopt;
    }
    std::string text = pointwiseText(Dialect::Cuda, value, t,
                                     value.operands.empty() ? "" : typeOf(value.operands[0]),
                                     [&](unsigned k) { return call(value.operands[k], "i"); });
    if (text.empty())
      return RenderProblem{RenderProblem::Kind::UnsupportedOp, v};
    define(v, "    return " + text + ";\n");
    return std::nullopt;
  }

  /// Note [Row kernels on the GPU]
  /// A row plan (rows of `cols` columns, reductions over each row) runs a
  /// warp per row, the rows of a grid-stride loop over warps: each lane
  /// takes the columns lane, lane + 32, ... in order, and a row reduction
  /// combines the lanes' partial values by a butterfly of xor shuffles, then
  /// takes lane 0's value for every lane, so every lane holds the same bits
  /// (a maximum of +0 and -0 depends on its order). The order is fixed: the
  /// same bits run after run, though not the CPU's (its lanes are eight
  /// vector lanes), so a row sum matches the CPU's to rounding. A row value
  /// is a register of the warp, not scratch memory. Rows of up to a few
  /// thousand columns; longer rows want a block per row (next).
  std::optional<RenderProblem> renderRows() {
    const int64_t rows = plan.rows, cols = plan.cols, n = rows * cols;
    body << "  const int64_t lane = threadIdx.x % 32;\n"
         << "  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);\n"
         << "  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + "
            "threadIdx.x / 32; r < "
         << rows << "; r += warps) {\n";
    for (int v = 0; v < static_cast<int>(plan.values.size()); ++v)
      if (std::optional<RenderProblem> problem = emit(v))
        return problem;
    body << "  for (int64_t c = lane; c < " << cols << "; c += 32) {\n    const int64_t i = r * "
         << cols << " + c;\n";
    for (size_t k = 0; k < plan.results.size(); ++k)
      if (elements(plan.results[k].value) == n)
        body << "    out" << k << "[i] = " << call(plan.results[k].value, "i") << ";\n";
    body << "  }\n  if (lane == 0) {\n";
    for (size_t k = 0; k < plan.results.size(); ++k)
      if (elements(plan.results[k].value) != n) {
        if (elements(plan.results[k].value) != rows)
          return RenderProblem{RenderProblem::Kind::UnsupportedOp, plan.results[k].value};
        body << "    out" << k << "[r] = " << call(plan.results[k].value, "r") << ";\n";
      }
    body << "  }\n  }\n";
    return std::nullopt;
  }

  /// A row reduction (Note [Row kernels on the GPU]): the current row's
  /// value, in a register every lane holds.
  std::optional<RenderProblem> emitRowReduction(int v, bool isSum, const std::string &t) {
    const KernelPlan::Value &value = plan.values[v];
    int64_t rowCount = elements(v);
    if (rowCount != plan.rows || value.operands.size() != 1)
      return RenderProblem{RenderProblem::Kind::UnsupportedOp, v};
    int operand = value.operands[0];
    int64_t cols = rowCount == 0 ? 0 : elements(operand) / rowCount;
    std::string init = cols == 0 || isSum ? t + "(0)"
                       : t == "float"     ? std::string("__uint_as_float(0xff800000u)")
                       : t == "int64_t"
                           ? std::string("static_cast<int64_t>(-9223372036854775807LL - 1)")
                       : t == "int32_t" ? std::string("static_cast<int32_t>(-2147483647 - 1)")
                                        : std::string();
    if (init.empty())
      return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
    // A maximum keeps the first NaN it meets, as the CPU's.
    std::string combine = isSum ? "acc = acc + x;" : "if (x > acc || x != x) acc = x;";
    std::string n = "v" + std::to_string(v) + "_row";
    body << "    " << t << " " << n << ";\n    {\n      " << t << " acc = " << init << ";\n"
         << "      for (int64_t c = lane; c < " << cols << "; c += 32) {\n        " << t
         << " x = " << call(operand, "r * " + std::to_string(cols) + " + c") << ";\n        "
         << combine << "\n      }\n"
         << "      for (int o = 16; o > 0; o /= 2) {\n        " << t
         << " x = __shfl_xor_sync(0xffffffffu, acc, o);\n        " << combine << "\n      }\n"
         << "      " << n << " = __shfl_sync(0xffffffffu, acc, 0);\n    }\n";
    names[v] = "v" + std::to_string(v);
    body << "    auto " << names[v] << " = [&](int64_t i) -> " << t
         << " {\n      (void)i;\n      return " << n << ";\n    };\n";
    return std::nullopt;
  }

  const KernelPlan &plan;
  std::ostringstream os, body;
  std::vector<std::string> names;
  bool rowMode = false;
};

} // namespace

std::string cudaKernelPrologue() {
  return "// Generated by Sinter: one CUDA kernel per sinter.fusion.\n"
         "#include \"cuda/prologue.h\"\n";
}

std::optional<RenderProblem> renderCudaKernel(const KernelPlan &plan, const std::string &name,
                                              std::string &source, runtime::LaunchShape &shape) {
  CudaRenderer renderer(plan);
  std::optional<RenderProblem> problem = renderer.render(name, shape);
  if (!problem)
    source += renderer.text();
  return problem;
}

} // namespace sinter::codegen
