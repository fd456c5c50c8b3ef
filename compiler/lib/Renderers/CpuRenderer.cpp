//===- CpuRenderer.cpp - a kernel plan as a C++ function -------------------===//
//
// See Note [Kernels as functions of an index] in sinter/Codegen/CpuKernel.h.
// The renderer reads the kernel plan and nothing else (no MLIR): every
// decision (the domain, the locals, what is stored where, each reduction's
// strategy, the loops of independent parts) is the plan's, and this file
// only writes them down. The emitted code is plain C++17 with constant
// shapes, meant for the host compiler at -O2, which inlines the lambdas into
// the loops.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CpuRenderer.h"

#include "Pointwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <locale>
#include <map>
#include <span>
#include <sstream>

namespace sinter::codegen {
namespace {

using Dims = std::span<const int64_t>;
using Texts = std::vector<std::string>;

class Renderer {
public:
  /// The text is written in the classic locale, whatever the program set.
  explicit Renderer(const KernelPlan &plan)
      : plan(plan), kLanes(plan.choices.lanes), kMinRows(plan.choices.minRows),
        kColumnBlock(plan.choices.columnBlock) {
    os.imbue(std::locale::classic());
  }

  /// The kernel written so far.
  std::string text() const { return os.str(); }

  std::optional<RenderProblem> render(const std::string &name) {
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      if (cppElementTypeOf(plan.inputs[i].dtype).empty())
        return problem(RenderProblem::Kind::UnsupportedType, -1 - static_cast<int>(i));
    inputNames.assign(plan.inputs.size(), "");
    valueNames.assign(plan.values.size(), "");
    os << "\nextern \"C\" void " << name << "(const void *const *inputs, void *const *outputs) {\n";
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      std::string t = cppElementTypeOf(plan.inputs[i].dtype), n = "a" + std::to_string(i);
      os << "  const " << t << " *in" << i << " = static_cast<const " << t << " *>(inputs[" << i
         << "]);\n";
      nameBuffer(-1 - static_cast<int>(i), n, "in" + std::to_string(i), t);
    }
    if (plan.kind == KernelPlan::Kind::Rows)
      return finish(renderRows());
    for (int v = 0; v < static_cast<int>(plan.values.size()); ++v)
      if (!isLocal(v))
        if (auto failed = emit(v))
          return failed;
    if (plan.kind == KernelPlan::Kind::Elementwise) {
      // One loop per independent part computes its results, and the
      // pointwise values as locals.
      int64_t n = plan.results.empty() ? 0 : elements(plan.results[0].value);
      for (int part = 0; part < plan.parts; ++part) {
        std::vector<unsigned> results;
        for (unsigned k = 0; k < plan.results.size(); ++k)
          if (plan.results[k].part == part)
            results.push_back(k);
        os << "  {\n";
        for (unsigned k : results) {
          std::string t = typeOf(plan.results[k].value);
          os << "    " << t << " *out" << k << " = static_cast<" << t << " *>(outputs[" << k
             << "]);\n";
        }
        // Rows of the first result's last dim, each a vectorised loop over
        // its columns (Note [The column beside the index]); short rows, or
        // too few rows to share among the cores, one loop over every element.
        int64_t columns = n == 0 ? 0 : lastDim(plan.results[0].value);
        if (columns >= kLanes * 2 && n / columns >= kMinRows) {
          loopCols = columns;
          os << parallel(n / columns, n) << "    for (int64_t o = 0; o < " << n / columns
             << "; ++o)\n"
             << "    #pragma omp simd\n    for (int64_t c = 0; c < " << columns << "; ++c) {\n"
             << "      const int64_t i = o * " << columns << " + c;\n";
        } else {
          loopCols = -1;
          os << elementwise(n) << "    for (int64_t i = 0; i < " << n << "; ++i) {\n";
        }
        if (auto failed = emitLocals([&](int v) {
              return plan.values[v].op == "constant" || plan.values[v].part == part;
            }))
          return failed;
        writeResults(results);
        loopCols = -1;
        os << "    }\n  }\n";
      }
      os << "}\n";
      return finish(std::nullopt);
    }
    for (size_t k = 0; k < plan.results.size(); ++k) {
      const KernelPlan::Result &result = plan.results[k];
      std::string t = typeOf(result.value);
      os << "  {\n    " << t << " *out = static_cast<" << t << " *>(outputs[" << k << "]);\n"
         << elementwise(elements(result.value)) << "    for (int64_t i = 0; i < "
         << elements(result.value) << "; ++i)\n"
         << "      out[i] = " << call(result.value, "i") << ";\n  }\n";
    }
    os << "}\n";
    return finish(std::nullopt);
  }

private:
  using enum KernelPlan::Storage;

  static std::optional<RenderProblem> problem(RenderProblem::Kind kind, int value) {
    return RenderProblem{kind, value};
  }

  /// The kernel written: its scratch buffers must be the plan's.
  std::optional<RenderProblem> finish(std::optional<RenderProblem> written) {
    if (!written && scratch != plan.scratchBytes)
      return problem(RenderProblem::Kind::ScratchMismatch, 0);
    return written;
  }

  // A value is an operand index of the plan (KernelPlan::Value::operands):
  // a value (>= 0) or an input (-1 - input).
  const std::vector<int64_t> &shapeOf(int v) const { return plan.shapeOf(v); }
  std::string typeOf(int v) const { return cppElementTypeOf(plan.dtypeOf(v)); }
  int64_t elements(int v) const { return plan.elementsOf(v); }
  /// The last dim of `v`'s shape (1 for a scalar).
  int64_t lastDim(int v) const {
    const std::vector<int64_t> &shape = shapeOf(v);
    return shape.empty() ? 1 : shape.back();
  }
  std::string &name(int v) { return v < 0 ? inputNames[-1 - v] : valueNames[v]; }
  bool isLocal(int v) const { return v >= 0 && plan.values[v].storage == Local; }
  bool rowBound(int v) const { return v >= 0 && plan.values[v].perRow; }
  static bool isReduction(const KernelPlan::Value &value) {
    return value.op == "reduce_sum" || value.op == "reduce_max";
  }

  /// Note [Row kernels]
  /// A fusion with row reductions (softmax, layer norm, cross-entropy and
  /// their gradients) runs row by row: one parallel loop over the rows, and
  /// in it every reduction, stored value and result of that row in program
  /// order, so that the row's values are still in cache when read again
  /// instead of each phase sweeping the whole tensor. It applies when every
  /// reduction is over the same trailing `cols` elements of `rows` rows and
  /// no value computed in the row loop is read at another row's index (only
  /// reshapes, and broadcasts of per-row values along the row, read them at
  /// remapped indices). The kernel plan decides it (KernelPlan.cpp).

  /// Whether broadcast `v`, in a row kernel, spreads the current row's value
  /// of a per-row value along the row: then it reads that value at the row
  /// number, one load for the row, instead of computing the operand's index
  /// from every element's coordinates (a gather: softmax's max and sum, a
  /// layer norm's mean and deviation; 2.0 -> 1.1 ms for a softmax over
  /// 4096 x 128 on two cores). The operand is row-bound, so rowSafe held for
  /// the broadcast and for everything that reads it: it is only read within
  /// the current row. Its elements are the rows and its non-unit dims are the
  /// leading ones in order, so its index is the row number.
  bool broadcastsRowValue(int v) const {
    int operand = plan.values[v].operands[0];
    if (plan.kind != KernelPlan::Kind::Rows || !rowBound(operand) || elements(operand) != plan.rows)
      return false;
    const std::vector<int64_t> &dims = plan.values[v].dims;
    for (size_t j = 1; j < dims.size(); ++j)
      if (dims[j] <= dims[j - 1])
        return false;
    return true;
  }

  /// Note [Reads before writes]
  /// A loop that writes several results at index i reads every result's
  /// value at i before it writes any: a value that is not a local is
  /// computed where it is read, and an input a result is written over
  /// (Note [Donation], Note [In-place kernels] in
  /// sinter/Passes/BufferAssignment.h) may be read by a later result at
  /// the same index. Written one by one, the later result read what the
  /// earlier had just written there (a random graph's gradient of y, when
  /// y took the pow that read it: its sign flipped). One result is written
  /// as it is computed.
  void writeResults(const std::vector<unsigned> &results) {
    if (results.size() == 1) {
      os << "      out" << results[0] << "[i] = " << read(plan.results[results[0]].value) << ";\n";
      return;
    }
    for (unsigned k : results)
      os << "      const " << typeOf(plan.results[k].value) << " result" << k << " = "
         << read(plan.results[k].value) << ";\n";
    for (unsigned k : results)
      os << "      out" << k << "[i] = result" << k << ";\n";
  }

  /// Emits, in the output loop, the locals for which `wanted` holds.
  template <typename Wanted> std::optional<RenderProblem> emitLocals(const Wanted &wanted) {
    inLoop = true;
    for (int v = 0; v < static_cast<int>(plan.values.size()); ++v)
      if (isLocal(v) && wanted(v))
        if (auto failed = emitValue(v))
          return failed;
    inLoop = false;
    return std::nullopt;
  }

  /// A row kernel (Note [Row kernels]).
  std::optional<RenderProblem> renderRows() {
    int64_t rows = plan.rows, cols = plan.cols, n = rows * cols;
    int count = static_cast<int>(plan.values.size());
    os << parallel(rows, n) << "  for (int64_t r = 0; r < " << rows << "; ++r) {\n";
    for (int v = 0; v < count; ++v)
      if (!isLocal(v))
        if (auto failed = emit(v))
          return failed;
    auto outputPointer = [&](size_t k, int value) {
      std::string t = typeOf(value);
      os << "    " << t << " *out" << k << " = static_cast<" << t << " *>(outputs[" << k << "]);\n";
    };
    // Full rows: one loop over the row, with the pointwise values as locals.
    std::vector<unsigned> fullRows;
    for (unsigned k = 0; k < plan.results.size(); ++k)
      if (elements(plan.results[k].value) == n)
        fullRows.push_back(k);
    if (!fullRows.empty()) {
      os << "   {\n";
      for (unsigned k : fullRows)
        outputPointer(k, plan.results[k].value);
      os << "    #pragma omp simd\n    for (int64_t c = 0; c < " << cols << "; ++c) {\n"
         << "      const int64_t i = r * " << cols << " + c;\n";
      loopCols = cols;
      if (auto failed = emitLocals([&](int v) { return elements(v) == n; }))
        return failed;
      writeResults(fullRows);
      loopCols = -1;
      os << "    }\n   }\n";
    }
    // Per-row results.
    os << "   {\n    const int64_t i = r;\n";
    if (auto failed = emitLocals([&](int v) { return elements(v) == rows; }))
      return failed;
    for (size_t k = 0; k < plan.results.size(); ++k)
      if (int value = plan.results[k].value; elements(value) != n) {
        outputPointer(k, value);
        os << "    out" << k << "[i] = " << read(value) << ";\n";
      }
    os << "   }\n  }\n}\n";
    return std::nullopt;
  }

  /// Note [A loop per independent part]
  /// A fusion may hold computations that share nothing but small inputs (the
  /// AdamW updates of several parameters, which read the same learning rate).
  /// One loop over all of them streams every input and output at once, more
  /// streams than the hardware prefetchers follow: four AdamW updates (28
  /// streams) ran 3x slower in one loop than in four. So each part that
  /// shares no full-size input or computed value with another gets its own
  /// loop (the plan's parts); parts that share a full-size input stay
  /// together, so that input is read once.

  /// `v` at the loop index: a local's name, or a function's call.
  std::string read(int v) { return call(v, "i", countedColumn(v, loopCols)); }

  /// `c` when the loop over `columns` columns counts `v`'s column too (its
  /// last dim is as long), else empty: the column is computed from the index.
  std::string countedColumn(int v, int64_t columns) const {
    return lastDim(v) == columns ? "c" : "";
  }

  /// Note [The column beside the index]
  /// Every value's function takes its linear index `i` and the index's
  /// column `c` (its coordinate in the value's last dim, `i % last dim`).
  /// A loop over a value's rows and columns passes `c` as it counts it, so a
  /// broadcast along the columns (a bias) reads its operand at `c`: a
  /// contiguous load, where recovering the column from `i` (a remainder the
  /// compiler does not fold back into the loop's counter) made a gather.
  /// Elementwise ops pass both on; layout ops compute their operand's column
  /// with its index.
  ///
  /// `v` called at `index`; `column` is its column, or empty to compute it.
  std::string call(int v, const std::string &index, const std::string &column = "") {
    if (isLocal(v))
      return name(v);
    return name(v) + "(" + index + ", " + (column.empty() ? columnOf(v, index) : column) + ")";
  }

  /// Names `v` `n`: a function reading `buffer`, of element type `t`, at its
  /// index.
  void nameBuffer(int v, const std::string &n, const std::string &buffer, const std::string &t) {
    os << "  auto " << n << " = [" << buffer << "](int64_t i, int64_t) -> " << t << " { return "
       << load(buffer, "i", t) << "; };\n";
    name(v) = n;
  }

  /// `buffer[index]` of element type `t`. GCC 12 vectorises no loop that
  /// loads a bool (a masked softmax's scores were a scalar loop with a branch
  /// per element), so a bool is loaded as its byte, compared with zero.
  static std::string load(const std::string &buffer, const std::string &index,
                          const std::string &t) {
    if (t == "bool")
      return "(reinterpret_cast<const uint8_t *>(" + buffer + ")[" + index + "] != 0)";
    return buffer + "[" + index + "]";
  }

  /// The column of linear index `index` in `v`.
  std::string columnOf(int v, const std::string &index) const {
    int64_t last = lastDim(v);
    if (last == 1)
      return "0";
    return "static_cast<int64_t>(static_cast<uint64_t>(" + index + ") % " + std::to_string(last) +
           "u)";
  }

  /// Declares `int64_t <prefix><d>` for every coordinate of linear index `i`
  /// in `shape`, the last one being the column `c` (Note [The column beside
  /// the index]).
  void coordinates(Dims shape, const std::string &prefix) {
    // Unsigned: indices are never negative, and division by a power of two
    // becomes a shift (and a loop of them can vectorise).
    // The row number is (i - c) / last dim: in a loop over columns the
    // compiler cancels c, so the other coordinates stay out of the loop.
    int64_t rank = static_cast<int64_t>(shape.size());
    if (rank == 0)
      return;
    os << "    int64_t " << prefix << rank - 1 << " = c;\n"
       << "    uint64_t rest = static_cast<uint64_t>(i - c) / " << shape[rank - 1] << "u;\n";
    for (int64_t d = rank - 2; d >= 0; --d)
      os << "    int64_t " << prefix << d << " = static_cast<int64_t>(rest % " << shape[d]
         << "u); rest /= " << shape[d] << "u;\n";
    os << "    (void)rest;\n";
  }

  /// The row-major linear index of coordinates `coords` (C++ expressions) in `shape`.
  static std::string linear(Dims shape, const Texts &coords) {
    std::string text = "0";
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      text += " + (" + coords[d] + ") * " + std::to_string(stride);
      stride *= shape[d];
    }
    return text;
  }

  /// The pragma of a loop over elements that are computed independently
  /// (every output loop and every stored value): split over the cores when
  /// large, and vectorised (`simd` asserts what holds here, that no
  /// iteration depends on another, which lets the compiler use gathers for
  /// remapped reads and libmvec for transcendental functions).
  static std::string elementwise(int64_t iterations) {
    return iterations >= (1 << 15) ? "  #pragma omp parallel for simd\n" : "  #pragma omp simd\n";
  }

  /// An OpenMP pragma for a loop of `iterations` iterations doing about
  /// `work` elements of work in all: iterations are independent (each writes
  /// its own elements), so the split keeps results deterministic; small loops
  /// stay serial.
  static std::string parallel(int64_t iterations, int64_t work) {
    return iterations >= 2 && work >= (1 << 15) ? "  #pragma omp parallel for\n" : "";
  }

  static std::string reductionInit(bool isSum, const std::string &t) {
    if (isSum)
      return "0";
    return t == "float" ? "-INFINITY" : "std::numeric_limits<" + t + ">::lowest()";
  }

  /// Declares `acc` and reduces into it the `count` values `element(c)` gives
  /// for c = 0, 1, ... (a C++ expression of the column c): a long block in
  /// kLanes interleaved partial results, combined pairwise, then the tail in
  /// order, a fixed order for a given length (deterministic) and one the
  /// compiler vectorises. `init` is the empty block's value.
  template <typename Element>
  void reduceBlock(bool isSum, const std::string &t, int64_t count, const std::string &init,
                   const Element &element) {
    os << "    int64_t c = 0;\n    " << t << " acc = " << init << ";\n";
    if (count >= 4 * kLanes) {
      // A float maximum keeps a NaN seen in each lane apart (a select and
      // an or vectorise, where a branch on `x != x` did not) and puts it
      // back before the lanes combine. GCC 12 vectorises the lanes only
      // when told to (`omp simd`): without it, a softmax's row maximum was
      // eight scalar compares and branches per eight elements.
      bool nans = !isSum && t == "float";
      os << "    " << t << " lane[" << kLanes << "];\n"
         << (nans ? "    int nan[" + std::to_string(kLanes) + "];\n" : "")
         << "    for (int k = 0; k < " << kLanes << "; ++k) lane[k] = " << init << ";\n"
         << (nans ? "    for (int k = 0; k < " + std::to_string(kLanes) + "; ++k) nan[k] = 0;\n"
                  : "")
         << "    for (; c + " << kLanes << " <= " << count << "; c += " << kLanes << ")\n"
         << "      #pragma omp simd\n"
         << "      for (int k = 0; k < " << kLanes << "; ++k) {\n"
         << "        " << t << " x = " << element("c + k") << ";\n"
         << "        "
         << (isSum  ? "lane[k] += x;"
             : nans ? "lane[k] = x > lane[k] ? x : lane[k];\n        nan[k] |= x != x;"
                    : "if (x > lane[k]) lane[k] = x;")
         << "\n      }\n"
         << (nans ? "    for (int k = 0; k < " + std::to_string(kLanes) +
                        "; ++k) if (nan[k]) lane[k] = NAN;\n"
                  : "")
         << "    for (int w = " << kLanes / 2 << "; w > 0; w /= 2)\n"
         << "      for (int k = 0; k < w; ++k) {\n"
         << "        " << t << " x = lane[k + w];\n"
         << "        " << (isSum ? "lane[k] += x;" : "if (x > lane[k] || x != x) lane[k] = x;")
         << "\n      }\n"
         << "    acc = lane[0];\n";
    }
    os << "    for (; c < " << count << "; ++c) {\n"
       << "      " << t << " x = " << element("c") << ";\n"
       << "      " << (isSum ? "acc += x;" : "if (x > acc || x != x) acc = x;") << "\n"
       << "    }\n";
  }

  /// In the loop over result elements j: declares the kept coordinates k0,
  /// k1, ... (sizes `kept`) from j, opens the loop over `steps` steps q and
  /// declares in it the coordinates s0, s1, ... of `shape`'s dims marked
  /// `reduced` (read for `shape`'s dims only), from q. Returns the
  /// coordinate of each dim of `shape`.
  Texts openReductionSteps(Dims shape, const std::vector<bool> &reduced, Dims kept, int64_t steps) {
    os << "    int64_t restj = j;\n";
    for (int64_t d = static_cast<int64_t>(kept.size()) - 1; d >= 0; --d)
      os << "    int64_t k" << d << " = restj % " << kept[d] << "; restj /= " << kept[d] << ";\n";
    os << "    for (int64_t q = 0; q < " << steps << "; ++q) {\n      int64_t restq = q;\n";
    std::vector<int64_t> summed;
    for (size_t d = 0; d < shape.size(); ++d)
      if (reduced[d])
        summed.push_back(shape[d]);
    for (int64_t d = static_cast<int64_t>(summed.size()) - 1; d >= 0; --d)
      os << "      int64_t s" << d << " = restq % " << summed[d] << "; restq /= " << summed[d]
         << ";\n";
    Texts coords;
    int64_t nk = 0, ns = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      coords.push_back(reduced[d] ? "s" + std::to_string(ns++) : "k" + std::to_string(nk++));
    return coords;
  }

  /// A reduction over dims that are not all trailing, by the plan's
  /// strategy: for each result element, its reduced coordinates in
  /// increasing order (leading dims: column blocks; trailing dims:
  /// contiguous blocks, each in lanes).
  void emitGeneralReduction(int v, bool isSum, const std::string &t) {
    const KernelPlan::Value &value = plan.values[v];
    int operand = value.operands[0];
    Dims from = shapeOf(operand);
    std::vector<bool> reduced(from.size(), false);
    for (int64_t d : value.reducedDims)
      reduced[d] = true;
    std::vector<int64_t> kept, summed;
    for (size_t d = 0; d < from.size(); ++d)
      (reduced[d] ? summed : kept).push_back(from[d]);
    int64_t count = 1;
    for (int64_t e : summed)
      count *= e;
    std::string n = "v" + std::to_string(next++), buffer = n + "_values";
    os << "  " << t << " *" << buffer << " = " << scratchBuffer(t, elements(v)) << ";\n";
    std::string combine = isSum ? "acc[c] += x;" : "if (x > acc[c] || x != x) acc[c] = x;";
    int64_t columns = elements(v);
    if (value.reduction == KernelPlan::Reduction::ColumnBlocks) {
      // Leading dimensions summed (a bias gradient: rows of [count, columns]):
      // blocks of columns in parallel, each walking the rows in order with
      // its partial results in registers: contiguous loads, and the same
      // order of additions per column as the general loop below.
      os << "  #pragma omp parallel for schedule(static) if (" << columns << " > " << kColumnBlock
         << " && " << count * columns << " >= 32768)\n"
         << "  for (int64_t j0 = 0; j0 < " << columns << "; j0 += " << kColumnBlock << ") {\n"
         << "    const int64_t width = std::min<int64_t>(" << kColumnBlock << ", " << columns
         << " - j0);\n"
         << "    " << t << " acc[" << kColumnBlock << "];\n"
         << "    for (int64_t c = 0; c < width; ++c) acc[c] = " << reductionInit(isSum, t) << ";\n"
         << "    for (int64_t q = 0; q < " << count << "; ++q) {\n"
         << "      #pragma omp simd\n"
         << "      for (int64_t c = 0; c < width; ++c) {\n"
         << "        " << t << " x = "
         << call(operand, "q * " + std::to_string(columns) + " + j0 + c",
                 lastDim(operand) == columns ? "j0 + c" : "")
         << ";\n"
         << "        " << combine << "\n      }\n    }\n"
         << "    for (int64_t c = 0; c < width; ++c) " << buffer << "[j0 + c] = acc[c];\n  }\n";
      nameBuffer(v, n, buffer, t);
      return;
    }
    // Trailing dims reduced after a kept one (a batch norm's statistics over
    // N, H and W of NCHW): each output combines, outer step by outer step,
    // contiguous blocks of the trailing dims, each reduced in lanes
    // (reduceBlock) where the loop below took a dependent add and an index
    // decomposition per element.
    if (value.reduction == KernelPlan::Reduction::TrailingBlocks) {
      int64_t rank = static_cast<int64_t>(from.size()), trailing = 0, inner = 1;
      while (trailing < rank && reduced[rank - 1 - trailing])
        inner *= from[rank - 1 - trailing++];
      Dims outer = from.first(from.size() - trailing);
      os << parallel(elements(v), elements(operand)) << "  for (int64_t j = 0; j < " << elements(v)
         << "; ++j) {\n"
         << "    " << t << " total = " << reductionInit(isSum, t) << ";\n";
      Texts coords = openReductionSteps(outer, reduced, kept, count / inner);
      os << "      const int64_t base = (" << linear(outer, coords) << ") * " << inner << ";\n"
         << "     {\n";
      bool counted = lastDim(operand) == inner;
      reduceBlock(isSum, t, inner, reductionInit(isSum, t), [&](const std::string &c) {
        return call(operand, "base + " + c, counted ? c : "");
      });
      os << "      " << (isSum ? "total += acc;" : "if (acc > total || acc != acc) total = acc;")
         << "\n     }\n    }\n    " << buffer << "[j] = total;\n  }\n";
      nameBuffer(v, n, buffer, t);
      return;
    }
    os << parallel(elements(v), elements(operand)) << "  for (int64_t j = 0; j < " << elements(v)
       << "; ++j) {\n"
       << "    " << t << " acc = " << (count == 0 ? std::string("0") : reductionInit(isSum, t))
       << ";\n";
    Texts coords = openReductionSteps(from, reduced, kept, count);
    os << "      " << t << " x = " << call(operand, linear(from, coords)) << ";\n";
    if (isSum)
      os << "      acc += x;\n";
    else
      os << "      if (x > acc || x != x) acc = x;\n";
    os << "    }\n    " << buffer << "[j] = acc;\n  }\n";
    nameBuffer(v, n, buffer, t);
  }

  /// A scratch buffer of `count` elements of `t`: an output slot after the
  /// kernel's results, which the program gives a place in its arena.
  std::string scratchBuffer(const std::string &t, int64_t count) {
    scratch.push_back(std::max<int64_t>(count, 1) * cppElementBytes(t));
    return "static_cast<" + t + " *>(outputs[" +
           std::to_string(plan.results.size() + scratch.size() - 1) + "])";
  }

  /// Names a local of the output loop.
  std::string local(int v) {
    std::string n = "v" + std::to_string(next++);
    name(v) = n;
    return n;
  }

  std::string define(int v) {
    std::string n = "v" + std::to_string(next++);
    name(v) = n;
    os << "  auto " << n << " = [&](int64_t i, int64_t c) -> " << typeOf(v) << " {\n    (void)c;\n";
    return n;
  }

  /// Emits `v`; a value the plan stores (used more than once: not a
  /// reduction, a layout op, an iota or a constant) is then computed once
  /// into a buffer, or a chain of reuses (residuals, Adam's update) would
  /// recompute exponentially many times per element.
  std::optional<RenderProblem> emit(int v) {
    if (auto failed = emitValue(v))
      return failed;
    const KernelPlan::Value &value = plan.values[v];
    if (isReduction(value) || (value.storage != RowStack && value.storage != Scratch))
      return std::nullopt;
    std::string n = name(v), t = typeOf(v), buffer = n + "_values";
    int64_t rows = plan.rows, cols = plan.cols;
    bool rowMode = plan.kind == KernelPlan::Kind::Rows;
    // Buffers are pointers captured by value, and no buffer holds a
    // character type (whose stores may alias anything): the compiler keeps
    // every pointer in a register across the loops' stores.
    if (value.storage == RowStack) {
      // A full-row value of a row kernel is needed for its row only: an array
      // on the thread's stack, reused row after row, instead of a
      // tensor-sized scratch buffer in the arena (Note [Row kernels]).
      os << "  alignas(64) " << t << " " << buffer << "[" << cols << "];\n"
         << "  #pragma omp simd\n  for (int64_t c = 0; c < " << cols << "; ++c)\n    " << buffer
         << "[c] = " << call(v, "r * " + std::to_string(cols) + " + c", countedColumn(v, cols))
         << ";\n";
      name(v) = n + "_stored";
      os << "  auto " << name(v) << " = [&" << buffer << ", r](int64_t i, int64_t) -> " << t
         << " { return " << load(buffer, "i - r * " + std::to_string(cols), t) << "; };\n";
      return std::nullopt;
    }
    os << "  " << t << " *" << buffer << " = " << scratchBuffer(t, elements(v)) << ";\n";
    if (rowMode && elements(v) == rows)
      os << "  " << buffer << "[r] = " << call(v, "r") << ";\n";
    else if (rowMode)
      os << "  #pragma omp simd\n  for (int64_t c = 0; c < " << cols
         << "; ++c) {\n    const int64_t i = r * " << cols << " + c;\n    " << buffer
         << "[i] = " << call(v, "i", countedColumn(v, cols)) << ";\n  }\n";
    else
      os << elementwise(elements(v)) << "  for (int64_t i = 0; i < " << elements(v)
         << "; ++i)\n    " << buffer << "[i] = " << call(v, "i") << ";\n";
    nameBuffer(v, n + "_stored", buffer, t);
    return std::nullopt;
  }

  /// The coordinates in the operand (of shape `from`) that layout op
  /// `value` reads at its own coordinates y0, y1, ...
  static Texts operandCoordinates(const KernelPlan::Value &value, Dims from) {
    Texts coords;
    if (value.op == "broadcast_in_dim") {
      for (size_t d = 0; d < value.dims.size(); ++d)
        coords.push_back(from[d] == 1 ? "0" : "y" + std::to_string(value.dims[d]));
    } else if (value.op == "transpose") {
      coords.resize(from.size());
      for (size_t k = 0; k < value.dims.size(); ++k)
        coords[value.dims[k]] = "y" + std::to_string(k);
    } else { // a slice
      for (size_t d = 0; d < from.size(); ++d)
        coords.push_back(std::to_string(value.start[d]) + " + y" + std::to_string(d) + " * " +
                         std::to_string(value.step[d]));
    }
    return coords;
  }

  std::optional<RenderProblem> emitValue(int v) {
    const KernelPlan::Value &value = plan.values[v];
    if (value.dtype.empty())
      return problem(RenderProblem::Kind::SeveralResults, v);
    std::string t = typeOf(v);
    if (t.empty())
      return problem(RenderProblem::Kind::UnsupportedType, v);
    // Operand `k` at `index` (its column given, or computed); at the op's own
    // index, an operand with the same last dim has the same column.
    auto arg = [&](unsigned k, const std::string &index = "i", const std::string &column = "") {
      int operand = value.operands[k];
      if (column.empty() && index == "i")
        return call(operand, index, countedColumn(operand, inLoop ? loopCols : lastDim(v)));
      return call(operand, index, column);
    };
    // The operand's column among coordinates `coords` of its shape.
    auto lastOf = [](const Texts &coords) {
      return coords.empty() ? std::string("0") : coords.back();
    };

    if (isReduction(value)) {
      // Half values are reduced in f32 (Note [Half precision in f32]).
      if (cppComputeTypeOf(t) != t)
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v, kHalfReduction};
      bool isSum = value.op == "reduce_sum";
      if (value.reduction != KernelPlan::Reduction::Row) {
        emitGeneralReduction(v, isSum, t);
        return std::nullopt;
      }
      int64_t rowCount = elements(v);
      if (rowCount == 0) { // nothing to compute
        name(v) = "v" + std::to_string(next++);
        os << "  auto " << name(v) << " = [&](int64_t, int64_t) -> " << t << " { return 0; };\n";
        return std::nullopt;
      }
      int operand = value.operands[0];
      int64_t colCount = elements(operand) / rowCount;
      std::string n = "v" + std::to_string(next++), buffer = n + "_rows";
      // An empty row reduces to 0, as in the reference executor.
      std::string init = colCount == 0 ? "0" : reductionInit(isSum, t);
      // The row reduction, into a per-row array, in order: in the row loop
      // of a row kernel, else in its own loop.
      os << "  " << t << " *" << buffer << " = " << scratchBuffer(t, rowCount) << ";\n";
      if (plan.kind != KernelPlan::Kind::Rows)
        os << parallel(rowCount, rowCount * colCount) << "  for (int64_t r = 0; r < " << rowCount
           << "; ++r) ";
      // The operand's column when a row is its last dim.
      std::string column = countedColumn(operand, colCount);
      std::string row = "r * " + std::to_string(colCount) + " + ";
      os << "{\n";
      reduceBlock(isSum, t, colCount, init,
                  [&](const std::string &c) { return arg(0, row + c, column.empty() ? "" : c); });
      os << "    " << buffer << "[r] = acc;\n  }\n";
      nameBuffer(v, n, buffer, t);
      return std::nullopt;
    }
    if (value.op == "constant") {
      if (!value.splat)
        return problem(RenderProblem::Kind::UnsupportedOp, v);
      if (inLoop) {
        os << "      const " << t << " " << local(v) << " = " << literalText(Dialect::Cpu, value, t)
           << ";\n";
        return std::nullopt;
      }
      define(v);
      os << "    (void)i;\n    return " << literalText(Dialect::Cpu, value, t) << ";\n  };\n";
      return std::nullopt;
    }
    std::string body;
    if (value.op == "reshape") {
      // The same index; the operand's column from ours where one last dim
      // divides the other. (`c` is a loop's column, which may be another
      // last dim's.)
      int64_t mine = lastDim(v), theirs = lastDim(value.operands[0]);
      std::string column;
      if (inLoop && loopCols != mine)
        body = arg(0);
      else {
        if (mine > 1 && theirs > mine && theirs % mine == 0)
          column = "static_cast<int64_t>(static_cast<uint64_t>(i - c) / " + std::to_string(mine) +
                   "u % " + std::to_string(theirs / mine) + "u) * " + std::to_string(mine) + " + c";
        else if (theirs > 1 && mine > theirs && mine % theirs == 0)
          column =
              "static_cast<int64_t>(static_cast<uint64_t>(c) % " + std::to_string(theirs) + "u)";
        body = arg(0, "i", column);
      }
    } else {
      body = pointwiseText(Dialect::Cpu, value, t,
                           value.operands.empty() ? "" : typeOf(value.operands[0]),
                           [&](unsigned k) { return arg(k); });
    }
    if (!body.empty()) {
      if (inLoop) {
        os << "      const " << t << " " << local(v) << " = " << body << ";\n";
        return std::nullopt;
      }
      define(v);
      os << "    return " << body << ";\n  };\n";
      return std::nullopt;
    }
    // Ops that read their operand at another index, or need coordinates.
    const std::vector<int64_t> &shape = value.shape;
    if (value.op == "broadcast_in_dim" || value.op == "transpose" || value.op == "slice") {
      define(v);
      if (value.op == "broadcast_in_dim" && broadcastsRowValue(v)) {
        os << "    (void)i;\n    return " << arg(0, "r") << ";\n  };\n";
        return std::nullopt;
      }
      Dims from = shapeOf(value.operands[0]);
      coordinates(shape, "y");
      Texts coords = operandCoordinates(value, from);
      os << "    return " << arg(0, linear(from, coords), lastOf(coords)) << ";\n  };\n";
      return std::nullopt;
    }
    if (value.op == "iota") {
      define(v);
      coordinates(shape, "y");
      os << "    return static_cast<" << t << ">(y" << value.dims[0] << ");\n  };\n";
      return std::nullopt;
    }
    if (value.op == "random") {
      define(v);
      // Philox keyed by (seed, stream, element index): the same numbers as
      // the reference executor and the CUDA kernels.
      os << "    uint64_t seed = static_cast<uint64_t>(" << arg(0, "0") << ");\n"
         << "    return sinter::kernels::"
         << (value.distribution == "uniform" ? "philoxUniform" : "philoxNormal") << "(seed, "
         << value.stream << "ULL, static_cast<uint64_t>(i));\n  };\n";
      return std::nullopt;
    }
    return problem(RenderProblem::Kind::UnsupportedOp, v);
  }

  const KernelPlan &plan;
  /// The plan's choices (Note [Plan choices]), constants of the kernel text.
  const int64_t kLanes, kMinRows, kColumnBlock;
  std::ostringstream os;
  /// Each input's and value's name in the kernel.
  std::vector<std::string> inputNames, valueNames;
  bool inLoop = false;
  /// The last dim whose column the loop being written counts as `c` (-1:
  /// none; Note [The column beside the index]).
  int64_t loopCols = -1;
  /// The scratch bytes of the buffers written so far, in output-slot order.
  std::vector<int64_t> scratch;
  int next = 0;
};

} // namespace

std::string cppElementTypeOf(const std::string &dtype) {
  if (dtype == "f32")
    return "float";
  if (dtype == "i1")
    return "bool";
  if (dtype == "i32")
    return "int32_t";
  if (dtype == "i64")
    return "int64_t";
  if (dtype == "f16")
    return "sinter_f16";
  if (dtype == "bf16")
    return "sinter_bf16";
  return "";
}

std::string cppComputeTypeOf(const std::string &t) {
  return t == "sinter_f16" || t == "sinter_bf16" ? "float" : t;
}

bool isFloatDtype(const std::string &dtype) {
  return dtype == "f32" || dtype == "f16" || dtype == "bf16";
}

int64_t cppElementBytes(const std::string &t) {
  if (t == "bool" || t == "uint8_t")
    return 1;
  if (t == "sinter_f16" || t == "sinter_bf16")
    return 2;
  return t == "int64_t" || t == "double" ? 8 : 4;
}

std::string cpuKernelPrologue() {
  return "// Generated by Sinter: one function per sinter.fusion.\n"
         "#include \"cpu/kernel.h\"\n"
         "#include \"common/philox.h\"\n";
}

KernelPlan::Choices cpuPlanChoices() {
  return {.lanes = 8,
          .minRows = 16,
          .columnBlock = 64,
          .rowStackBytes = 256 * 1024,
          .storesValues = true};
}

std::optional<RenderProblem> renderCpuKernel(const KernelPlan &plan, const std::string &name,
                                             std::string &source) {
  // Lanes are combined pairwise, so a power of two; values the loops do not
  // store would be read where they are not.
  const KernelPlan::Choices &choices = plan.choices;
  if (choices.lanes < 1 || (choices.lanes & (choices.lanes - 1)) != 0 || choices.minRows < 1 ||
      choices.columnBlock < 1 || !choices.storesValues)
    return RenderProblem{RenderProblem::Kind::ForeignChoices, -1,
                         "a plan made with other choices than the CPU's (" +
                             std::to_string(choices.lanes) + " lanes, " +
                             std::to_string(choices.minRows) + " rows, column blocks of " +
                             std::to_string(choices.columnBlock) +
                             (choices.storesValues ? ")" : ", values not stored)")};
  Renderer renderer(plan);
  std::optional<RenderProblem> problem = renderer.render(name);
  source += renderer.text();
  return problem;
}

} // namespace sinter::codegen
