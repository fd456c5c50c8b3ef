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
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace sinter::codegen {
namespace {

constexpr int64_t kThreads = kCudaThreads;
constexpr int64_t kWarps = kThreads / 32;
constexpr int64_t kSharedBytes = 48 * 1024;
/// Rows of at least this many columns take a block each, shorter ones a
/// warp (Note [Row kernels on the GPU]).
constexpr int64_t kBlockRowColumns = 2048;
/// Rows of at most this many columns share a warp: 32 / w rows to a warp,
/// w lanes to a row, w the columns rounded up to a power of two (Note [Row
/// kernels on the GPU]).
constexpr int64_t kShortRowColumns = 16;
/// Split column reductions (Note [Split column reductions]): outputs a
/// tile, reduced elements a split at least (and the fewest for the walk),
/// blocks to aim for (a GPU's worth: 132 SMs of 8 blocks on an H100), and
/// the most splits.
constexpr int64_t kColumnTile = 32;
constexpr int64_t kSplitElements = 64;
constexpr int64_t kFillBlocks = kCudaFillBlocks;
constexpr int64_t kMaxSplits = 1024;
/// Split reductions over the innermost dim (Note [Split column
/// reductions]): reduced elements a split at least (a block's 256 threads
/// take four each).
constexpr int64_t kInnerSplitElements = 1024;
/// Pointwise loops of at least this many elements take 16 bytes a thread
/// where their pointers are aligned (Note [Vector loads]).
constexpr int64_t kVectorElements = 1024;

/// Note [Vector loads]
/// A pointwise loop (an Elements walk that reduces nothing) of at least
/// kVectorElements elements gives each thread w neighbouring elements, w
/// such that w elements of its widest buffer are 16 bytes (4 of f32, 8 of
/// f16 or bf16), as PyTorch's vectorized elementwise kernels and llm.c's
/// Packed128 do: one 128-bit load or store in place of four. Each thread
/// computes all results at its w indices, then stores them, so a result
/// written over an input (Note [In-place kernels]) is still read before it
/// is written. Alignment is proved at run time, not assumed: the buffers
/// the loop reads and writes at its own index are 16-byte aligned unless a
/// view starts inside one (Program::Step::inputOffsets), so the kernel tests
/// the pointers (one test for every thread: a uniform branch), tells the
/// compiler what it found (SINTER_ASSUME_ALIGNED, kernels/cuda/prologue.h),
/// and NVRTC then joins the w loads and stores of each buffer into vector
/// ones (`ld.global.v4.f32`, `st.global.v4.f32`); otherwise, and for the
/// last elements short of w, the loop takes one element a thread. The
/// launch gives the loop a thread per w elements.

/// Note [Loops of a CUDA kernel]
/// A CUDA kernel is one or more grid-stride loops, each writing some of the
/// plan's results; each walks its domain one of three ways:
///  - Elements: a thread per element (pointwise kernels, w neighbouring
///    elements a thread where the buffers allow: Note [Vector loads];
///    reductions that keep the innermost dim, such as a bias gradient's
///    column sums: the thread of an output element adds its column top to
///    bottom, and the threads of a warp read 32 neighbouring columns of each
///    row, so every load is coalesced);
///  - WarpElements: a warp per element (reductions over the innermost dim
///    that the plan does not hold row by row, such as batch-norm statistics
///    over N, H and W: the lanes of a warp read neighbouring elements of
///    one output's block and combine them by shuffles; few outputs of many
///    elements are split across blocks instead, a Columns walk below);
///  - Rows: a warp per row of `cols` columns, several rows a warp when
///    they are short, or a block per row of many columns (Note [Row
///    kernels on the GPU]): the row's reductions once, into registers, then
///    its columns.
/// The loops of an elementwise plan are its independent parts (which share
/// no full-size input, so no loop reads what another writes in place),
/// merged where they walk alike; a per-result plan's are its results (it
/// writes nothing in place), merged likewise. Every value is a function of
/// its index, computed where read (the plan's stored values, which the CPU
/// keeps in scratch, cost no memory here; Note [Values computed once]); a
/// reduction outside a row is
/// computed where read, except where that would repeat it for many elements
/// (read through a broadcast, or inside another reduction): that loop is a
/// Block walk (below) until split reductions land. Each loop computes all its results at an
/// index before it stores any, so a result written over an input (Note
/// [In-place kernels]) never changes what the loop reads next; an input a
/// reduction reads may not be written over in an Elements or WarpElements
/// loop (other threads read it), which is refused. Every reduction runs in
/// a fixed order: the same bits run after run.
///
/// A loop none of these can walk (a row's value read at another row, as a
/// transpose after a softmax; a reduction read at many elements, or inside
/// another) is walked by one block (Block): each reduction, in program
/// order, into a __shared__ array (a warp per row for a row's, a thread per
/// element for the others), a barrier after each, then the results. One
/// block of 256 threads is slow on a large tensor, and the arrays must fit
/// 48 KiB of shared memory; fusion makes no such loop in the zoo's steps
/// (it is the CPU's stored values' case, which split reductions will serve
/// at full speed).
enum class Walk : uint8_t { Elements, WarpElements, Rows, Block, Columns };

/// Note [Values computed once]
/// Where a loop reads a value at an index (a result stored, an element a
/// reduction takes in), the renderer writes the statements that compute it
/// there, straight-line: each value the expression needs at the same index
/// is a local computed once (`const float e12 = e10 * e10;`), a layout op's
/// operand is computed at its own index (a local too), and reductions,
/// constants, iota and random numbers are their functions of the index
/// (lambdas: a row's register, a loop over the reduced elements). Pointwise
/// and layout values have no function of their own. The values were once
/// all lambdas calling each other, which NVRTC inlines before it can merge
/// them: a value read by two others was inlined twice, so a chain of
/// layer-norm-like steps (a square, a mean, a difference read again)
/// doubled at each step. Three row kernels of a step of 50 random graphs
/// came to 22,000 to 45,000 calls by the paths to their values; two of them
/// took NVRTC 18 s and over 90 s alone, and the step's 176 kernels 260 s
/// (10 s now). Each scope computes each value once, whatever the graph.

struct Loop {
  std::vector<size_t> results;
  Walk walk = Walk::Elements;
  int64_t elements = 0; // Elements and WarpElements: the results' size
  int64_t rows = 0, cols = 0;
  bool blockPerRow = false;      // Rows: a block per row, not a warp
  int64_t rowLanes = 32;         // Rows: the lanes of a row (32 / rowLanes rows a warp)
  int64_t tiles = 0, splits = 1; // Columns: tiles of outputs, splits of the reduced
  bool innermost = false;        // Columns: one output a tile, its elements along the block
  std::vector<bool> needed;      // the values its results read
  int64_t vector = 1;            // Elements: neighbouring elements a thread (Note [Vector loads])
  std::vector<std::string> vectorPointers; // Elements with vector > 1: the pointers tested
};

bool isReduction(const KernelPlan::Value &value) {
  return value.op == "reduce_sum" || value.op == "reduce_max";
}

/// The first reduction outside a row that reads input `input`, or -1.
int reductionReading(const KernelPlan &plan, int input) {
  // Values in program order: an operand's answer is known before its user's.
  std::vector<bool> reads(plan.values.size(), false);
  for (size_t v = 0; v < plan.values.size(); ++v) {
    const KernelPlan::Value &value = plan.values[v];
    for (int operand : value.operands)
      if (operand < 0 ? -1 - operand == input : reads[operand])
        reads[v] = true;
    if (reads[v] && isReduction(value) && value.reduction != KernelPlan::Reduction::Row)
      return static_cast<int>(v);
  }
  return -1;
}

} // namespace

void keepCudaInPlacePairs(KernelPlan &plan) {
  std::erase_if(plan.inPlace, [&](const std::pair<unsigned, unsigned> &pair) {
    return reductionReading(plan, static_cast<int>(pair.first)) >= 0;
  });
}

namespace {

class CudaRenderer {
public:
  explicit CudaRenderer(const KernelPlan &plan) : plan(plan) { os.imbue(std::locale::classic()); }

  std::string text() const { return os.str(); }

  std::optional<RenderProblem> render(const std::string &name, runtime::LaunchShape &shape) {
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
    // Other threads read what a reduction reads: nothing of it is written
    // over in place (keepCudaInPlacePairs drops such pairs).
    for (const auto &[input, result] : plan.inPlace)
      if (int v = reductionReading(plan, static_cast<int>(input)); v >= 0)
        return refused(v, "a result written over an input that a reduction reads");
    std::vector<Loop> loops = loopsOf();
    for (Loop &loop : loops)
      if (std::optional<RenderProblem> problem = classify(loop)) {
        if (problem->kind != RenderProblem::Kind::UnsupportedOp)
          return problem;
        if (std::optional<RenderProblem> blockProblem = blockWalk(loop)) {
          problem->detail += "; " + blockProblem->detail;
          return problem;
        }
      }
    merge(loops);
    for (Loop &loop : loops)
      loop.vector = vectorWidth(loop, loop.vectorPointers);
    names.assign(plan.values.size(), "");
    int64_t blocks = 1;
    bool warpOperations = false;
    for (size_t l = 0; l < loops.size(); ++l) {
      const Loop &loop = loops[l];
      body << "  {\n";
      std::optional<RenderProblem> problem =
          loop.walk == Walk::Rows      ? renderRows(loop)
          : loop.walk == Walk::Block   ? renderBlock(loop)
          : loop.walk == Walk::Columns ? renderColumns(loop, name + "_arrivals" + std::to_string(l))
                                       : renderElements(loop);
      if (problem)
        return problem;
      body << "  }\n";
      int64_t wanted = loop.walk == Walk::Elements
                           ? (loop.elements + kThreads * loop.vector - 1) / (kThreads * loop.vector)
                       : loop.walk == Walk::WarpElements ? (loop.elements + kWarps - 1) / kWarps
                       : loop.walk == Walk::Columns      ? loop.tiles * loop.splits
                       : loop.walk != Walk::Rows         ? 1
                       : loop.blockPerRow                ? loop.rows
                                          : (loop.rows + kWarps * (32 / loop.rowLanes) - 1) /
                                                (kWarps * (32 / loop.rowLanes));
      blocks = std::max(blocks, wanted);
      warpOperations |= loop.walk != Walk::Elements;
    }
    shape = cudaLaunchShape(blocks);
    // The split reductions' partials, scratch buffers after the results.
    for (size_t k = 0; k < scratchTypes.size(); ++k) {
      parameters.push_back(scratchTypes[k] + " *__restrict__ scratch" + std::to_string(k));
      casts.push_back("static_cast<" + scratchTypes[k] + " *>(buffers[" +
                      std::to_string(plan.inputs.size() + plan.results.size() + k) + "])");
    }
    os << globals.str() << cudaKernelText(name, parameters, casts, body.str(), warpOperations);
    if (!globals.str().empty()) {
      // After a failed launch on the simulator the counters are zeroed
      // again (a GPU's context does not survive a failed kernel).
      os << "#ifdef SINTER_SIMULATED\nextern \"C\" void " << name << "_reset() {\n"
         << resets.str() << "}\n#endif\n";
    }
    return std::nullopt;
  }

  /// The bytes of each scratch buffer the kernel takes (after render()).
  const std::vector<int64_t> &scratch() const { return scratchBytes; }

private:
  std::string typeOf(int v) const { return cppElementTypeOf(plan.dtypeOf(v)); }
  int64_t elements(int v) const { return plan.elementsOf(v); }

  static RenderProblem refused(int v, std::string why) {
    return RenderProblem{RenderProblem::Kind::UnsupportedOp, v, std::move(why)};
  }

  /// The loops before merging: the parts of an elementwise plan, the one
  /// loop of a row plan, a loop per result of a per-result plan.
  std::vector<Loop> loopsOf() const {
    std::vector<Loop> loops;
    for (size_t k = 0; k < plan.results.size(); ++k) {
      size_t at = loops.size();
      if (plan.kind == KernelPlan::Kind::Rows && !loops.empty())
        at = 0;
      if (plan.kind == KernelPlan::Kind::Elementwise)
        for (size_t l = 0; l < loops.size(); ++l)
          if (plan.results[loops[l].results[0]].part == plan.results[k].part)
            at = l;
      if (at == loops.size())
        loops.emplace_back();
      loops[at].results.push_back(k);
    }
    for (Loop &loop : loops) {
      loop.needed.assign(plan.values.size(), false);
      std::vector<int> work;
      for (size_t k : loop.results)
        work.push_back(plan.results[k].value);
      while (!work.empty()) {
        int v = work.back();
        work.pop_back();
        if (v < 0 || loop.needed[v])
          continue;
        loop.needed[v] = true;
        for (int operand : plan.values[v].operands)
          work.push_back(operand);
      }
    }
    return loops;
  }

  /// Loops that walk alike become one (they read and write nothing the
  /// other writes: Note [Loops of a CUDA kernel]).
  static void merge(std::vector<Loop> &loops) {
    for (size_t a = 0; a < loops.size(); ++a)
      for (size_t b = a + 1; b < loops.size();) {
        if (loops[b].walk != loops[a].walk || loops[a].walk == Walk::Block ||
            loops[a].walk == Walk::Columns || loops[b].elements != loops[a].elements ||
            loops[b].rows != loops[a].rows || loops[b].cols != loops[a].cols) {
          ++b;
          continue;
        }
        loops[a].results.insert(loops[a].results.end(), loops[b].results.begin(),
                                loops[b].results.end());
        for (size_t v = 0; v < loops[a].needed.size(); ++v)
          loops[a].needed[v] = loops[a].needed[v] || loops[b].needed[v];
        loops.erase(loops.begin() + static_cast<std::ptrdiff_t>(b));
      }
  }

  /// For each value, whether it is computed from a value in `from` (the
  /// value itself included).
  std::vector<bool> computedFrom(const std::vector<bool> &from) const {
    std::vector<bool> depends(plan.values.size(), false);
    for (size_t v = 0; v < plan.values.size(); ++v) {
      depends[v] = from[v];
      for (int operand : plan.values[v].operands)
        if (operand >= 0 && depends[operand])
          depends[v] = true;
    }
    return depends;
  }

  /// How `loop` walks (Note [Loops of a CUDA kernel]), or why it cannot.
  std::optional<RenderProblem> classify(Loop &loop) const {
    int firstRow = -1;
    std::vector<bool> reductions(plan.values.size(), false);
    bool innermost = false;
    for (size_t v = 0; v < plan.values.size(); ++v) {
      if (!loop.needed[v] || !isReduction(plan.values[v]))
        continue;
      const KernelPlan::Value &value = plan.values[v];
      if (value.reduction == KernelPlan::Reduction::Row) {
        if (firstRow < 0)
          firstRow = static_cast<int>(v);
        continue;
      }
      reductions[v] = true;
      const std::vector<int64_t> &shape = plan.shapeOf(value.operands.at(0));
      innermost |= !shape.empty() &&
                   std::find(value.reducedDims.begin(), value.reducedDims.end(),
                             static_cast<int64_t>(shape.size()) - 1) != value.reducedDims.end();
    }
    bool anyOther = std::find(reductions.begin(), reductions.end(), true) != reductions.end();
    if (plan.kind == KernelPlan::Kind::Rows || firstRow >= 0) {
      if (anyOther)
        return refused(-1, "a reduction beside a row's that is not over the row");
      loop.walk = Walk::Rows;
      if (plan.kind == KernelPlan::Kind::Rows) {
        loop.rows = plan.rows, loop.cols = plan.cols;
      } else {
        loop.rows = elements(firstRow);
        loop.cols = loop.rows == 0 ? 0 : elements(plan.values[firstRow].operands.at(0)) / loop.rows;
      }
      loop.blockPerRow = loop.cols >= kBlockRowColumns;
      if (loop.cols <= kShortRowColumns)
        while (loop.rowLanes / 2 >= std::max<int64_t>(loop.cols, 1))
          loop.rowLanes /= 2;
      return checkRows(loop);
    }
    loop.walk = innermost ? Walk::WarpElements : Walk::Elements;
    loop.elements = elements(plan.results[loop.results[0]].value);
    for (size_t k : loop.results)
      if (elements(plan.results[k].value) != loop.elements)
        return refused(plan.results[k].value, "results of several sizes in one loop");
    if (!anyOther)
      return std::nullopt;
    // A reduction computed where read must be read once per element.
    std::vector<bool> fromReduction = computedFrom(reductions);
    for (size_t v = 0; v < plan.values.size(); ++v) {
      if (!loop.needed[v])
        continue;
      const KernelPlan::Value &value = plan.values[v];
      for (int operand : value.operands)
        if (operand >= 0 && fromReduction[operand] &&
            (isReduction(value) || elements(static_cast<int>(v)) > elements(operand)))
          return refused(static_cast<int>(v), "a reduction read at many elements (split "
                                              "reductions are not written yet)");
    }
    splitColumns(loop, reductions, fromReduction, innermost);
    return std::nullopt;
  }

  /// Makes an Elements loop of column reductions a Columns walk (Note
  /// [Split column reductions]) where each output reduces enough elements
  /// and everything computed from a reduction is read at its own index.
  void splitColumns(Loop &loop, const std::vector<bool> &reductions,
                    const std::vector<bool> &fromReduction, bool innermost) const {
    int64_t most = 0;
    for (size_t v = 0; v < plan.values.size(); ++v) {
      if (!loop.needed[v])
        continue;
      if (reductions[v]) {
        int64_t kept = elements(static_cast<int>(v));
        most = std::max(most, kept == 0 ? 0 : elements(plan.values[v].operands.at(0)) / kept);
        if (kept != loop.elements)
          return;
      }
      const KernelPlan::Value &value = plan.values[v];
      bool sameIndex = !value.hasIndexMap || value.op == "reshape";
      for (int operand : value.operands)
        if (operand >= 0 && fromReduction[operand] && !sameIndex)
          return;
    }
    if (loop.elements == 0)
      return;
    if (innermost) {
      // A warp per output fills the GPU where there are many outputs.
      if (most < kInnerSplitElements || loop.elements >= kFillBlocks * kWarps)
        return;
      loop.innermost = true;
      loop.tiles = loop.elements;
    } else {
      if (most < kSplitElements)
        return;
      loop.tiles = (loop.elements + kColumnTile - 1) / kColumnTile;
    }
    loop.walk = Walk::Columns;
    loop.splits =
        std::clamp<int64_t>(std::min((kFillBlocks + loop.tiles - 1) / loop.tiles,
                                     most / (innermost ? kInnerSplitElements : kSplitElements)),
                            1, kMaxSplits);
  }

  /// A row loop's results are rows or whole rows, and every value computed
  /// from a row's reductions is read only at the current row: by the same
  /// index, by a reshape that keeps it, by a broadcast of the row across
  /// its columns, or by a reduction over the row (anywhere, when there is
  /// one row).
  std::optional<RenderProblem> checkRows(const Loop &loop) const {
    const int64_t rows = loop.rows, cols = loop.cols;
    for (size_t k : loop.results) {
      int64_t n = elements(plan.results[k].value);
      if (n != rows * cols && n != rows)
        return refused(plan.results[k].value, "a result neither rows nor whole rows");
    }
    std::vector<bool> rowReductions(plan.values.size(), false);
    for (size_t v = 0; v < plan.values.size(); ++v) {
      const KernelPlan::Value &value = plan.values[v];
      if (!loop.needed[v] || !isReduction(value))
        continue;
      if (value.reduction != KernelPlan::Reduction::Row || value.operands.size() != 1 ||
          elements(static_cast<int>(v)) != rows || elements(value.operands[0]) != rows * cols)
        return refused(static_cast<int>(v), "a reduction that is not over this loop's rows");
      rowReductions[v] = true;
    }
    // One row: every element is in it, wherever a value is read.
    if (rows <= 1)
      return std::nullopt;
    std::vector<bool> fromRow = computedFrom(rowReductions);
    for (size_t v = 0; v < plan.values.size(); ++v) {
      const KernelPlan::Value &value = plan.values[v];
      // A row reduction reads its operand in the current row.
      if (!loop.needed[v] || rowReductions[v])
        continue;
      for (int operand : value.operands) {
        if (operand < 0 || !fromRow[operand])
          continue;
        bool sameIndex = !value.hasIndexMap || value.op == "reshape";
        if (sameIndex ? elements(static_cast<int>(v)) == elements(operand)
                      : elements(operand) == rows && broadcastsRows(value, cols))
          continue;
        return refused(static_cast<int>(v), "a row's value read at another row");
      }
    }
    return std::nullopt;
  }

  /// Whether `value` (a layout op) reads element i of its operand at i / cols.
  static bool broadcastsRows(const KernelPlan::Value &value, int64_t cols) {
    const std::vector<int64_t> &shape = value.shape;
    const std::vector<int64_t> &strides = value.map.strides;
    if (value.map.offset != 0 || strides.size() != shape.size())
      return false;
    std::vector<int64_t> rowMajor(shape.size(), 1);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
      rowMajor[d] = rowMajor[d + 1] * shape[d + 1];
    // The columns are the trailing dims from `first` on.
    size_t first = shape.size();
    int64_t trailing = 1;
    while (first > 0 && trailing < cols)
      trailing *= shape[--first];
    if (trailing != cols)
      return false;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1)
        continue;
      int64_t wanted = d >= first ? 0 : rowMajor[d] / cols;
      if (strides[d] != wanted)
        return false;
    }
    return true;
  }

  /// What one scope of straight-line code has computed (Note [Values
  /// computed once]): its statements, and per (value, index) the local
  /// holding it.
  struct Scope {
    std::string indent;
    std::string text;
    std::map<std::pair<int, std::string>, std::string> known;
  };

  /// `v` at `index`: the statements that compute it (into `scope`, once per
  /// value and index) and the local that holds it.
  std::string at(int v, const std::string &index, Scope &scope) const {
    auto key = std::make_pair(v, index);
    if (auto found = scope.known.find(key); found != scope.known.end())
      return found->second;
    std::string expression;
    const std::string type = typeOf(v);
    if (v < 0 || !isComputedWhereRead(plan.values[v])) {
      expression = call(v, index);
    } else if (const KernelPlan::Value &value = plan.values[v]; value.hasIndexMap) {
      // A layout op: its operand at offset + sum of coordinate x stride.
      std::string mapped = std::to_string(value.map.offset);
      for (size_t d = 0; d < value.map.strides.size(); ++d)
        if (value.map.strides[d] != 0)
          mapped += " + y" + std::to_string(d) + " * " + std::to_string(value.map.strides[d]);
      std::string j = "j" + std::to_string(fresh++);
      scope.text += scope.indent + "int64_t " + j + ";\n" + scope.indent + "{\n" +
                    coordinates(value.shape, index, scope.indent + "  ") + scope.indent + "  " + j +
                    " = " + mapped + ";\n" + scope.indent + "}\n";
      // The operand's local is the layout op's.
      std::string name = at(value.operands[0], j, scope);
      scope.known[key] = name;
      return name;
    } else {
      std::vector<std::string> operands;
      for (int operand : value.operands)
        operands.push_back(at(operand, index, scope));
      expression = pointwiseText(Dialect::Cuda, value, type,
                                 value.operands.empty() ? "" : typeOf(value.operands[0]),
                                 [&](unsigned k) { return operands[k]; });
    }
    std::string name = "e" + std::to_string(fresh++);
    scope.text += scope.indent + "const " + type + " " + name + " = " + expression + ";\n";
    scope.known[key] = name;
    return name;
  }

  /// Whether `value` is computed where it is read, with no function of its
  /// own (Note [Values computed once]): pointwise and layout ops.
  static bool isComputedWhereRead(const KernelPlan::Value &value) {
    return !isReduction(value) && value.op != "constant" && value.op != "iota" &&
           value.op != "random";
  }

  /// `v` read at element `index`: an input's element, or the value's
  /// function (a reduction, a constant, iota, random numbers).
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

  /// The coordinates y0.. of element `index` of `shape`, as statements.
  static std::string coordinates(const std::vector<int64_t> &shape, const std::string &index = "i",
                                 const std::string &indent = "    ") {
    std::string text = indent + "uint64_t rest = static_cast<uint64_t>(" + index + ");\n";
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
      text += indent + "const int64_t y" + std::to_string(d) + " = static_cast<int64_t>(rest % " +
              std::to_string(shape[d]) + "u); rest /= " + std::to_string(shape[d]) + "u;\n";
    return text + indent + "(void)rest;\n";
  }

  /// Defines every value `loop` reads, in program order.
  std::optional<RenderProblem> emitValues(const Loop &loop) {
    for (int v = 0; v < static_cast<int>(plan.values.size()); ++v)
      if (loop.needed[v])
        if (std::optional<RenderProblem> problem = emit(v, loop.walk))
          return problem;
    return std::nullopt;
  }

  std::optional<RenderProblem> emit(int v, Walk walk) {
    const KernelPlan::Value &value = plan.values[v];
    if (value.dtype.empty())
      return RenderProblem{RenderProblem::Kind::SeveralResults, v};
    std::string t = typeOf(v);
    if (t.empty())
      return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
    if (isReduction(value)) {
      // Half values are reduced in f32 (Note [Half precision in f32]).
      if (cppComputeTypeOf(t) != t)
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v, kHalfReduction};
      return walk == Walk::Rows ? emitRowReduction(v, t) : emitReduction(v, t, walk);
    }
    if (!value.reducedDims.empty())
      return refused(v, "an op that reduces but is not a sum or a maximum");
    if (value.op == "constant") {
      if (!value.splat)
        return refused(v, "a constant that is not one value");
      define(v, "    return " + literalText(Dialect::Cuda, value, t) + ";\n", false);
      return std::nullopt;
    }
    if (value.hasIndexMap) {
      // A layout op: computed where read (at()).
      if (value.operands.size() != 1)
        return refused(v, "a layout op of several operands");
      return std::nullopt;
    }
    if (value.op == "iota") {
      define(v, coordinates(value.shape) + "    return static_cast<" + t + ">(y" +
                    std::to_string(value.dims.at(0)) + ");\n");
      return std::nullopt;
    }
    if (value.op == "random") {
      // Philox keyed by (seed, stream, element index): the CPU's numbers.
      Scope scope{"    ", "", {}};
      std::string seed = at(value.operands[0], "0", scope);
      define(v, scope.text + "    const uint64_t seed = static_cast<uint64_t>(" + seed +
                    ");\n    return sinter::kernels::" +
                    (value.distribution == "uniform" ? "philoxUniform" : "philoxNormal") +
                    "(seed, " + std::to_string(value.stream) + "ULL, static_cast<uint64_t>(i));\n");
      return std::nullopt;
    }
    // A pointwise op: computed where read (at()); here only whether it can be.
    std::string text = pointwiseText(Dialect::Cuda, value, t,
                                     value.operands.empty() ? "" : typeOf(value.operands[0]),
                                     [&](unsigned k) { return "a" + std::to_string(k); });
    if (text.empty())
      return refused(v, "an op the pointwise table lacks (" + value.op + ")");
    return std::nullopt;
  }

  /// `loop`'s results of `count` elements at `index`: every value computed
  /// (first) and then every store (second), so that no store changes what
  /// a value reads (Note [Loops of a CUDA kernel]).
  std::pair<std::string, std::string> results(const Loop &loop, const std::string &index,
                                              int64_t count, const std::string &indent,
                                              const std::string &suffix = "") const {
    Scope scope{indent, "", {}};
    std::string values, stores;
    for (size_t k : loop.results) {
      int value = plan.results[k].value;
      if (elements(value) != count)
        continue;
      std::string r = "r" + std::to_string(k) + suffix;
      values +=
          indent + "const " + typeOf(value) + " " + r + " = " + at(value, index, scope) + ";\n";
      stores += indent + "out" + std::to_string(k) + "[" + index + "] = " + r + ";\n";
    }
    return {scope.text + values, stores};
  }

  /// An Elements or WarpElements loop (Note [Loops of a CUDA kernel]).
  std::optional<RenderProblem> renderElements(const Loop &loop) {
    const bool warp = loop.walk == Walk::WarpElements;
    if (warp)
      body << "  const int64_t lane = threadIdx.x % 32;\n";
    if (std::optional<RenderProblem> problem = emitValues(loop))
      return problem;
    if (warp) {
      body << "  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);\n"
           << "  for (int64_t i = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + "
              "threadIdx.x / 32; i < "
           << loop.elements << "; i += warps) {\n";
      // Every lane computes the values (a reduction needs them all); lane
      // 0 stores.
      auto [values, stores] = results(loop, "i", loop.elements, "      ");
      body << values << "    if (lane == 0) {\n" << stores << "    }\n";
    } else if (loop.vector > 1) {
      renderVectors(loop);
      return std::nullopt;
    } else {
      body << "  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; "
              "i < "
           << loop.elements << "; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {\n";
      auto [values, stores] = results(loop, "i", loop.elements, "    ");
      body << values << stores;
    }
    body << "  }\n";
    return std::nullopt;
  }

  /// The buffers a pointwise Elements loop reads and writes at its own
  /// index ("in0", "out1", ...), and the elements a thread takes (Note
  /// [Vector loads]): 1 where the loop keeps one element a thread.
  int64_t vectorWidth(const Loop &loop, std::vector<std::string> &pointers) const {
    pointers.clear();
    if (loop.walk != Walk::Elements || loop.elements < kVectorElements)
      return 1;
    int64_t widest = 0;
    auto add = [&](const std::string &pointer, int v) {
      if (std::find(pointers.begin(), pointers.end(), pointer) != pointers.end())
        return;
      pointers.push_back(pointer);
      widest = std::max(widest, cppElementBytes(typeOf(v)));
    };
    for (size_t v = 0; v < plan.values.size(); ++v) {
      const KernelPlan::Value &value = plan.values[v];
      if (!loop.needed[v])
        continue;
      if (isReduction(value))
        return 1;
      if (value.hasIndexMap) // a layout op reads its operand elsewhere
        continue;
      for (int operand : value.operands)
        if (operand < 0 && elements(operand) == loop.elements)
          add("in" + std::to_string(-1 - operand), operand);
    }
    for (size_t k : loop.results)
      if (elements(plan.results[k].value) == loop.elements)
        add("out" + std::to_string(k), plan.results[k].value);
    return widest <= 0 || widest > 16 ? 1 : 16 / widest;
  }

  /// A pointwise loop of loop.vector elements a thread where its buffers
  /// are aligned (Note [Vector loads]), then one element a thread for the
  /// rest (all of it where they are not).
  void renderVectors(const Loop &loop) {
    const std::vector<std::string> &pointers = loop.vectorPointers;
    const int64_t w = loop.vector;
    const int64_t full = loop.elements / w * w;
    std::string any;
    for (const std::string &pointer : pointers)
      any += (any.empty() ? "" : " | ") + std::string("reinterpret_cast<unsigned long long>(") +
             pointer + ")";
    body << "  const bool vectors = ((" << any << ") & 15ULL) == 0;\n"
         << "  if (vectors) {\n";
    for (const std::string &pointer : pointers)
      body << "    SINTER_ASSUME_ALIGNED(" << pointer << ");\n";
    body << "    for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < "
         << full / w << "; q += static_cast<int64_t>(gridDim.x) * blockDim.x) {\n"
         << "      const int64_t i = q * " << w << ";\n";
    std::string values, stores;
    for (int64_t j = 0; j < w; ++j) {
      auto [value, store] = results(loop, j == 0 ? "i" : "i + " + std::to_string(j), loop.elements,
                                    "      ", "_" + std::to_string(j));
      values += value;
      stores += store;
    }
    body << values << stores << "    }\n  }\n";
    body << "  for (int64_t i = (vectors ? " << full
         << " : 0) + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < "
         << loop.elements << "; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {\n";
    auto [values1, stores1] = results(loop, "i", loop.elements, "    ");
    body << values1 << stores1 << "  }\n";
  }

  /// Note [Row kernels on the GPU]
  /// A row loop (rows of `cols` columns, reductions over each row) runs a
  /// warp per row, the rows of a grid-stride loop over warps: each lane
  /// takes the columns lane, lane + 32, ... in order, and a row reduction
  /// combines the lanes' partial values by a butterfly of xor shuffles, then
  /// takes lane 0's value for every lane, so every lane holds the same bits
  /// (a maximum of +0 and -0 depends on its order). The order is fixed: the
  /// same bits run after run, though not the CPU's (its lanes are eight
  /// vector lanes), so a row sum matches the CPU's to rounding. A row value
  /// is a register of the warp, not scratch memory; the row's reductions
  /// are done (each ends in a shuffle every lane takes part in) before any
  /// lane stores, so a result written over an input never changes what a
  /// reduction reads.
  ///
  /// A row of kBlockRowColumns (2048) columns or more takes a block of
  /// kThreads (256) instead, the rows of a grid-stride loop over blocks:
  /// thread t takes columns t, t + 256, ... in order; a reduction combines
  /// each warp's lanes by the butterfly, lane 0 of each warp puts the
  /// warp's value in shared memory, and after a barrier every thread
  /// combines the eight warps' values in warp order (the same bits in every
  /// thread, run after run); a second barrier keeps the array until all
  /// have read it. The choice is the one llm.c's softmax and layer-norm
  /// kernels and XLA's row-reduction emitter make: a warp per row keeps a
  /// short row's reduction in registers and shuffles, with no barrier and
  /// no shared memory, and fills the GPU when there are many rows; a long
  /// row (a language model's logits over its vocabulary: 4096 columns in
  /// gpt-mini, 50257 in GPT-2) would leave each lane a serial loop of
  /// cols / 32 loads and, with few rows, most of the GPU idle, where a block
  /// gives each thread cols / 256 and eight times the parallelism per row.
  /// Rows of 2048 columns are 64 loads a lane in a warp, 8 a thread in a
  /// block.
  ///
  /// Rows of kShortRowColumns (16) columns or fewer (a classifier's ten
  /// logits, attention over a short context) share a warp, as Inductor's
  /// and XLA's row reductions pack short rows: w lanes to a row (the columns
  /// rounded up to a power of two), 32 / w rows to a warp, lane l on row
  /// l / w, column l % w; the butterfly stays within a row's w lanes
  /// (__shfl_xor_sync's offsets below w, then the row's first lane's value
  /// by __shfl_sync's width). Past the last row, a warp's lanes take no
  /// columns but still take part in every shuffle, so each shuffle has all
  /// 32 lanes. Ten columns on a warp of 32 lanes used 10 of them; 16 lanes
  /// to a row use 10 of 16, two rows to a warp.
  std::optional<RenderProblem> renderRows(const Loop &loop) {
    const int64_t rows = loop.rows, cols = loop.cols;
    blockRows = loop.blockPerRow;
    rowLanes = blockRows ? 32 : loop.rowLanes;
    const bool shared = rowLanes < 32;
    // A lane's first column: past the row's end where its row is past the last.
    rowFirst = blockRows ? "threadIdx.x"
               : shared  ? "(live ? slot : " + std::to_string(cols) + ")"
                         : "lane";
    const std::string first = rowFirst;
    const std::string step = blockRows ? std::to_string(kThreads) : std::to_string(rowLanes);
    body << "  const int64_t lane = threadIdx.x % 32;\n";
    if (blockRows) {
      body << "  const int64_t warp = threadIdx.x / 32;\n"
           << "  for (int64_t r = blockIdx.x; r < " << rows << "; r += gridDim.x) {\n";
    } else if (shared) {
      const std::string perWarp = std::to_string(32 / rowLanes);
      body << "  const int64_t slot = lane % " << rowLanes << ";\n"
           << "  const int64_t groups = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32) * "
           << perWarp << ";\n"
           << "  for (int64_t r0 = (static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + "
              "threadIdx.x / 32) * "
           << perWarp << "; r0 < " << rows << "; r0 += groups) {\n"
           << "  const int64_t r = r0 + lane / " << rowLanes << ";\n"
           << "  const bool live = r < " << rows << ";\n  (void)live;\n";
    } else {
      body << "  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);\n"
           << "  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + "
              "threadIdx.x / 32; r < "
           << rows << "; r += warps) {\n";
    }
    if (std::optional<RenderProblem> problem = emitValues(loop))
      return problem;
    body << "  for (int64_t c = " << first << "; c < " << cols << "; c += " << step
         << ") {\n    const int64_t i = r * " << cols << " + c;\n";
    auto [values, stores] = results(loop, "i", rows * cols, "    ");
    body << values << stores << "  }\n";
    auto [rowValues, rowStores] = results(loop, "r", rows, "    ");
    if (rows * cols != rows && !rowValues.empty())
      body << "  if (" << (shared ? "live && slot" : first) << " == 0) {\n"
           << rowValues << rowStores << "  }\n";
    body << "  }\n";
    if (blockRows)
      body << "  (void)lane;\n  (void)warp;\n";
    if (shared)
      body << "  (void)slot;\n";
    blockRows = false;
    rowLanes = 32;
    rowFirst = "lane";
    return std::nullopt;
  }

  /// Note [Split column reductions]
  /// A loop of reductions that keep the innermost dim (a bias gradient's
  /// column sums over the rows, a layer norm's weight gradient) has few
  /// outputs, each the sum of many elements: a thread per output leaves
  /// most of a GPU idle (768 columns of 8192 rows: 768 threads, each adding
  /// 8192 numbers one after another). Where each output reduces at least
  /// kSplitElements (64) elements, the loop is split two ways (a Columns
  /// walk, as XLA's and Inductor's split reductions and CUB's two-pass
  /// reductions do):
  ///  - outputs in tiles of 32 (a warp's lanes take 32 neighbouring
  ///    outputs, so a row's loads are coalesced), and each output's
  ///    reduced elements in `splits` runs of equal length, so that the
  ///    (tile, split) pairs, one block each, fill the GPU (about
  ///    kFillBlocks, 1024: eight blocks on each of an H100's 132 SMs), with
  ///    at least 64 elements a split;
  ///  - in a block, warp w adds elements w, w + 8, ... of its split's run;
  ///    the eight warps' values meet in shared memory and warp 0 combines
  ///    them in warp order, and writes the split's value into a scratch
  ///    buffer of splits x outputs (planned in the arena like any scratch);
  ///  - the last block of a tile to finish (a counter per tile, counted by
  ///    an atomic after a __threadfence, as the CUDA guide's "last block"
  ///    pattern) combines the splits' values in split order, then computes
  ///    and stores the loop's results for the tile's outputs, and sets the
  ///    counter back to 0 for the next launch.
  /// Every output's elements are combined in one fixed order whichever
  /// block is last (within a warp's stride, then warps, then splits): the
  /// same bits run after run, on any grid, in the simulator's shuffled
  /// mode too. With one split there is no scratch and no counter (warp 0
  /// combines and stores). The counters are globals of the module, zero
  /// when it is loaded and after every launch that completes (kernels of
  /// one device run in stream order); the simulator zeroes them after a
  /// launch that fails. What is computed from a reduction must be read at
  /// its own output (the last block of a tile knows only its tile's);
  /// other loops keep a thread per output (a warp per output over the
  /// innermost dim).
  ///
  /// Reductions over the innermost dim with few outputs (batch-norm
  /// statistics over N, H and W of NCHW: 64 channels of 32 x 56 x 56 =
  /// 100,352 elements in resnet18 at batch 32, 64 warps on the whole GPU as
  /// a warp per output) are split the same way with a tile of one output:
  /// where an output reduces at least kInnerSplitElements (1024) elements
  /// and a warp per output would leave the GPU short of kFillBlocks blocks
  /// of warps, each (output, split) is a block whose thread t takes the
  /// split's elements t, t + 256, ... in order (a warp's loads are 32
  /// neighbouring elements), each warp's lanes combine by the butterfly,
  /// then the warps in order and the splits in order, by thread 0. The
  /// Block walk's reductions (read at many elements) are not split yet.
  std::optional<RenderProblem> renderColumns(const Loop &loop, const std::string &counter) {
    columns = &loop;
    const int64_t outputs = loop.elements, splits = loop.splits;
    // Who combines and stores: warp 0's lanes, an output each; over the
    // innermost dim, thread 0, the tile's one output.
    const std::string mine =
        loop.innermost ? "threadIdx.x == 0" : "warp == 0 && o < " + std::to_string(outputs);
    const std::string o = std::to_string(outputs), s = std::to_string(splits);
    std::vector<int> reductions;
    for (int v = 0; v < static_cast<int>(plan.values.size()); ++v)
      if (loop.needed[v] && isReduction(plan.values[v]))
        reductions.push_back(v);
    struct Combine {
      std::string t, init, rule;
    };
    std::vector<Combine> rules;
    for (int v : reductions) {
      Combine c{typeOf(v), "", ""};
      if (!c.t.empty() && cppComputeTypeOf(c.t) != c.t)
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v, kHalfReduction};
      if (c.t.empty() ||
          !combineRule(plan.values[v].op == "reduce_sum", c.t, false, c.init, c.rule))
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
      rules.push_back(c);
    }
    body << "  const int64_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n";
    for (size_t r = 0; r < reductions.size(); ++r)
      body << "  __shared__ " << rules[r].t << " v" << reductions[r] << "_warps[" << kWarps
           << "][32];\n";
    if (splits > 1) {
      body << "  __shared__ bool last;\n";
      globals << "__device__ unsigned int " << counter << "[" << loop.tiles << "];\n";
      resets << "  for (int k = 0; k < " << loop.tiles << "; ++k)\n    " << counter
             << "[k] = 0u;\n";
    }
    body << "  for (int64_t item = blockIdx.x; item < " << loop.tiles * splits
         << "; item += gridDim.x) {\n"
         << "  const int64_t tile = item / " << s << ", split = item % " << s << ";\n"
         << "  const int64_t o = " << (loop.innermost ? "tile" : "tile * 32 + lane")
         << ";\n  (void)split;\n";
    for (size_t r = 0; r < reductions.size(); ++r)
      body << "  " << rules[r].t << " v" << reductions[r] << "_total = " << rules[r].init << ";\n";
    if (std::optional<RenderProblem> problem = emitValues(loop))
      return problem;
    for (size_t r = 0; r < reductions.size(); ++r) {
      std::string n = "v" + std::to_string(reductions[r]);
      body << "  " << n << "_warps[warp][lane] = o < " << o << " ? " << n
           << "_part(o) : " << rules[r].init << ";\n";
    }
    body << "  __syncthreads();\n";
    // Warp 0's lane of each output combines its eight warps' values in order
    // (over the innermost dim: thread 0, lane 0's slots).
    auto warps = [&](size_t r, const std::string &to) {
      std::string n = "v" + std::to_string(reductions[r]), t = rules[r].t;
      return "      {\n        " + t + " acc = " + n + "_warps[0][lane];\n" +
             "        for (int w = 1; w < " + std::to_string(kWarps) + "; ++w) {\n          " + t +
             " x = " + n + "_warps[w][lane];\n          " + rules[r].rule +
             "\n        }\n        " + to + " = acc;\n      }\n";
    };
    auto [values, stores] = results(loop, "o", outputs, "      ");
    if (splits == 1) {
      body << "  if (" << mine << ") {\n";
      for (size_t r = 0; r < reductions.size(); ++r)
        body << warps(r, "v" + std::to_string(reductions[r]) + "_total");
      body << values << stores << "  }\n";
    } else {
      body << "  if (" << mine << ") {\n";
      for (size_t r = 0; r < reductions.size(); ++r) {
        body << warps(r, "scratch" + std::to_string(scratchTypes.size() + r) + "[split * " + o +
                             " + o]");
      }
      body << "    __threadfence();\n  }\n  __syncthreads();\n"
           << "  if (threadIdx.x == 0)\n    last = atomicAdd(&" << counter
           << "[tile], 1u) == " << splits - 1 << "u;\n  __syncthreads();\n  if (last) {\n"
           << "    if (" << mine << ") {\n";
      for (size_t r = 0; r < reductions.size(); ++r) {
        std::string n = "v" + std::to_string(reductions[r]), t = rules[r].t;
        body << "      {\n        const volatile " << t << " *p = scratch"
             << scratchTypes.size() + r << ";\n        " << t << " acc = p[o];\n"
             << "        for (int64_t k = 1; k < " << s << "; ++k) {\n          " << t
             << " x = p[k * " << o << " + o];\n          " << rules[r].rule
             << "\n        }\n        " << n << "_total = acc;\n      }\n";
      }
      body << values << stores << "    }\n    if (threadIdx.x == 0)\n      " << counter
           << "[tile] = 0u;\n  }\n";
      for (size_t r = 0; r < reductions.size(); ++r) {
        scratchTypes.push_back(rules[r].t);
        scratchBytes.push_back(splits * outputs *
                               static_cast<int64_t>(cppElementBytes(rules[r].t)));
      }
    }
    body << "  __syncthreads();\n  }\n";
    columns = nullptr;
    return std::nullopt;
  }

  /// Makes `loop` a Block walk (Note [Loops of a CUDA kernel]), or says
  /// why it cannot be one: its reductions' arrays past 48 KiB of shared
  /// memory.
  std::optional<RenderProblem> blockWalk(Loop &loop) const {
    int64_t bytes = 0;
    for (size_t v = 0; v < plan.values.size(); ++v)
      if (loop.needed[v] && isReduction(plan.values[v]))
        bytes += elements(static_cast<int>(v)) * 8;
    if (bytes > kSharedBytes)
      return refused(-1, "one block cannot walk it: " + std::to_string(bytes) +
                             " bytes of reductions, more than 48 KiB of shared memory");
    loop.walk = Walk::Block;
    loop.elements = -1;
    return std::nullopt;
  }

  /// A Block walk (Note [Loops of a CUDA kernel]): block 0 alone.
  std::optional<RenderProblem> renderBlock(const Loop &loop) {
    body << "  if (blockIdx.x == 0) {\n"
         << "  const int64_t lane = threadIdx.x % 32;\n"
         << "  const int64_t warp = threadIdx.x / 32, warps = blockDim.x / 32;\n";
    for (int v = 0; v < static_cast<int>(plan.values.size()); ++v) {
      if (!loop.needed[v])
        continue;
      const KernelPlan::Value &value = plan.values[v];
      if (!isReduction(value)) {
        if (std::optional<RenderProblem> problem = emit(v, Walk::Block))
          return problem;
        continue;
      }
      std::string t = typeOf(v);
      if (t.empty())
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
      if (cppComputeTypeOf(t) != t)
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v, kHalfReduction};
      const int64_t count = elements(v);
      std::string array = "v" + std::to_string(v) + "_all";
      body << "  __shared__ " << t << " " << array << "[" << std::max<int64_t>(count, 1) << "];\n";
      if (value.reduction == KernelPlan::Reduction::Row) {
        // A warp per row, as Note [Row kernels on the GPU].
        std::optional<std::string> row = rowReduction(v, t, "const " + t + " all = ", "    ");
        if (!row)
          return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
        body << "  for (int64_t r = warp; r < " << count << "; r += warps) {\n"
             << *row << "    if (lane == 0)\n      " << array << "[r] = all;\n  }\n";
      } else {
        // A thread per element, its reduced elements in order.
        if (std::optional<RenderProblem> problem = emitReduction(v, t, Walk::Elements))
          return problem;
        body << "  for (int64_t o = threadIdx.x; o < " << count << "; o += blockDim.x)\n    "
             << array << "[o] = " << names[v] << "(o);\n";
      }
      body << "  __syncthreads();\n";
      // Readers take the element from the array.
      names[v] = "v" + std::to_string(v) + "s";
      body << "  auto " << names[v] << " = [&](int64_t i) -> " << t << " {\n    return " << array
           << "[i];\n  };\n";
    }
    // The results, a block-stride loop per size: values, then stores.
    std::vector<int64_t> sizes;
    for (size_t k : loop.results)
      if (std::find(sizes.begin(), sizes.end(), elements(plan.results[k].value)) == sizes.end())
        sizes.push_back(elements(plan.results[k].value));
    for (int64_t n : sizes) {
      auto [values, stores] = results(loop, "i", n, "    ");
      body << "  for (int64_t i = threadIdx.x; i < " << n << "; i += blockDim.x) {\n"
           << values << stores << "  }\n";
    }
    body << "  (void)lane;\n  (void)warp;\n  (void)warps;\n  }\n";
    return std::nullopt;
  }

  /// A reduction's first value and how it takes in `x`, for type `t`.
  static bool combineRule(bool isSum, const std::string &t, bool empty, std::string &init,
                          std::string &combine) {
    init = empty || isSum   ? t + "(0)"
           : t == "float"   ? std::string("__uint_as_float(0xff800000u)")
           : t == "int64_t" ? std::string("static_cast<int64_t>(-9223372036854775807LL - 1)")
           : t == "int32_t" ? std::string("static_cast<int32_t>(-2147483647 - 1)")
                            : std::string();
    // A maximum keeps the first NaN it meets, as the CPU's.
    combine = isSum ? "acc = acc + x;" : "if (x > acc || x != x) acc = x;";
    return !init.empty();
  }

  /// Lanes' partial values combined by a butterfly of xor shuffles into
  /// `acc`, then lane 0's taken by every lane (into `to`).
  /// Within segments of `width` lanes (a power of two): each segment's
  /// own value, its first lane's.
  static std::string butterfly(const std::string &t, const std::string &combine,
                               const std::string &to, const std::string &indent,
                               int64_t width = 32) {
    const std::string w = width < 32 ? ", " + std::to_string(width) : "";
    return indent + "for (int o = " + std::to_string(width / 2) + "; o > 0; o /= 2) {\n" + indent +
           "  " + t + " x = __shfl_xor_sync(0xffffffffu, acc, o" + w + ");\n" + indent + "  " +
           combine + "\n" + indent + "}\n" + indent + to + "__shfl_sync(0xffffffffu, acc, 0" + w +
           ");\n";
  }

  /// Row r's value of row reduction `v` (of type `t`) combined by the
  /// lanes of a warp (Note [Row kernels on the GPU]), assigned by `to`
  /// (`"v_row = "`), or nullopt for a type without a maximum's identity.
  std::optional<std::string> rowReduction(int v, const std::string &t, const std::string &to,
                                          const std::string &indent,
                                          const std::string &first = "lane",
                                          const std::string &step = "32",
                                          int64_t width = 32) const {
    const KernelPlan::Value &value = plan.values[v];
    int operand = value.operands.at(0);
    int64_t rows = elements(v), cols = rows == 0 ? 0 : elements(operand) / rows;
    std::string init, combine;
    if (!combineRule(value.op == "reduce_sum", t, cols == 0, init, combine))
      return std::nullopt;
    Scope scope{indent + "  ", "", {}};
    std::string x = at(operand, "r * " + std::to_string(cols) + " + c", scope);
    return indent + t + " acc = " + init + ";\n" + indent + "for (int64_t c = " + first + "; c < " +
           std::to_string(cols) + "; c += " + step + ") {\n" + scope.text + indent + "  " + t +
           " x = " + x + ";\n" + indent + "  " + combine + "\n" + indent + "}\n" +
           butterfly(t, combine, to, indent, width);
  }

  /// A row reduction (Note [Row kernels on the GPU]): the current row's
  /// value, in a register every lane holds.
  std::optional<RenderProblem> emitRowReduction(int v, const std::string &t) {
    std::string n = "v" + std::to_string(v) + "_row";
    if (blockRows) {
      // A block per row: the warps' values through shared memory.
      std::string init, combine, warps = "v" + std::to_string(v) + "_warps";
      combineRule(plan.values[v].op == "reduce_sum", t, false, init, combine);
      std::optional<std::string> row =
          rowReduction(v, t, "acc = ", "      ", "threadIdx.x", std::to_string(kThreads));
      if (!row)
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
      body << "    __shared__ " << t << " " << warps << "[" << kWarps << "];\n    " << t << " " << n
           << ";\n    {\n"
           << *row << "      if (lane == 0)\n        " << warps << "[warp] = acc;\n"
           << "      __syncthreads();\n      acc = " << warps << "[0];\n"
           << "      for (int w = 1; w < " << kWarps << "; ++w) {\n        " << t
           << " x = " << warps << "[w];\n        " << combine << "\n      }\n      " << n
           << " = acc;\n      __syncthreads();\n    }\n";
    } else {
      std::optional<std::string> row =
          rowReduction(v, t, n + " = ", "      ", rowFirst, std::to_string(rowLanes), rowLanes);
      if (!row)
        return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
      body << "    " << t << " " << n << ";\n    {\n" << *row << "    }\n";
    }
    names[v] = "v" + std::to_string(v);
    body << "    auto " << names[v] << " = [&](int64_t i) -> " << t
         << " {\n      (void)i;\n      return " << n << ";\n    };\n";
    return std::nullopt;
  }

  /// A reduction outside a row, a function of its output index: the
  /// thread's own loop over the reduced elements in order (Elements), or
  /// the warp's, lane by lane and then by shuffles (WarpElements). The
  /// operand's dims are taken in runs of kept and reduced dims (a run is
  /// one stride), so an output's elements are found with a division per
  /// run rather than per dim.
  std::optional<RenderProblem> emitReduction(int v, const std::string &t, Walk walk) {
    const KernelPlan::Value &value = plan.values[v];
    if (value.operands.size() != 1)
      return refused(v, "a reduction of several operands");
    int operand = value.operands[0];
    const std::vector<int64_t> &shape = plan.shapeOf(operand);
    struct Run {
      int64_t size = 1, stride = 1;
      bool reduced = false;
    };
    std::vector<Run> runs;
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      bool reduced = std::find(value.reducedDims.begin(), value.reducedDims.end(), d) !=
                     value.reducedDims.end();
      if (shape[d] != 1) {
        if (!runs.empty() && runs.back().reduced == reduced)
          runs.back().size *= shape[d];
        else
          runs.push_back({shape[d], stride, reduced});
      }
      stride *= shape[d];
    }
    int64_t kept = 1, count = 1;
    for (const Run &run : runs)
      (run.reduced ? count : kept) *= run.size;
    if (kept != elements(v))
      return refused(v, "a reduction whose result is not its kept dims");
    std::string init, combine;
    if (!combineRule(value.op == "reduce_sum", t, count == 0, init, combine))
      return RenderProblem{RenderProblem::Kind::UnsupportedType, v};
    // Runs innermost first: each takes its coordinate from what is left of
    // the index; the outermost takes all that is left.
    auto decompose = [&](bool reduced, const std::string &from, const std::string &to,
                         const std::string &indent) {
      std::vector<const Run *> mine;
      for (const Run &run : runs)
        if (run.reduced == reduced)
          mine.push_back(&run);
      std::string text = indent + "uint64_t " + from + "_left = static_cast<uint64_t>(" + from +
                         ");\n" + indent + "(void)" + from + "_left;\n";
      for (size_t r = 0; r < mine.size(); ++r) {
        std::string coordinate = r + 1 == mine.size()
                                     ? from + "_left"
                                     : from + "_left % " + std::to_string(mine[r]->size) + "u";
        text += indent + to + " += static_cast<int64_t>(" + coordinate + ") * " +
                std::to_string(mine[r]->stride) + ";\n";
        if (r + 1 < mine.size())
          text += indent + from + "_left /= " + std::to_string(mine[r]->size) + "u;\n";
      }
      return text;
    };
    if (walk == Walk::Columns) {
      // Warp `warp`'s share of split `split` of output i's elements (every
      // eighth of the split's run, in order); over the innermost dim, the
      // warp's lanes' shares (thread t: every 256th from t) combined by the
      // butterfly. The reduction itself is `total`, combined after every
      // split's share is in (Note [Split column reductions]).
      const bool inner = columns->innermost;
      Scope scope{"      ", "", {}};
      std::string x = at(operand, "at", scope);
      const std::string chunk = std::to_string((count + columns->splits - 1) / columns->splits),
                        n = std::to_string(count), name = "v" + std::to_string(v);
      body << "  auto " << name << "_part = [&](int64_t i) -> " << t << " {\n"
           << "    int64_t base = 0;\n"
           << decompose(false, "i", "base", "    ") << "    " << t << " acc = " << init << ";\n"
           << "    const int64_t j_end = (split + 1) * " << chunk << " < " << n
           << " ? (split + 1) * " << chunk << " : " << n << ";\n"
           << "    for (int64_t j = split * " << chunk << " + " << (inner ? "threadIdx.x" : "warp")
           << "; j < j_end; j += " << (inner ? kThreads : kWarps)
           << ") {\n      int64_t at = base;\n"
           << decompose(true, "j", "at", "      ") << scope.text << "      " << t << " x = " << x
           << ";\n      " << combine << "\n    }\n"
           << (inner ? butterfly(t, combine, "return ", "    ") : "    return acc;\n") << "  };\n";
      define(v, "    return " + name + "_total;\n", false);
      return std::nullopt;
    }
    const bool warp = walk == Walk::WarpElements;
    Scope scope{"      ", "", {}};
    std::string x = at(operand, "at", scope);
    std::string text = "    int64_t base = 0;\n" + decompose(false, "i", "base", "    ") + "    " +
                       t + " acc = " + init + ";\n    for (int64_t j = " + (warp ? "lane" : "0") +
                       "; j < " + std::to_string(count) + "; j += " + (warp ? "32" : "1") +
                       ") {\n      int64_t at = base;\n" + decompose(true, "j", "at", "      ") +
                       scope.text + "      " + t + " x = " + x + ";\n      " + combine +
                       "\n    }\n";
    text += warp ? butterfly(t, combine, "return ", "    ") : "    return acc;\n";
    define(v, text);
    return std::nullopt;
  }

  const KernelPlan &plan;
  std::ostringstream os, body;
  std::vector<std::string> names;
  mutable int64_t fresh = 0;             // the next local's number (Note [Values computed once])
  bool blockRows = false;                // a Rows loop of a block per row is being written
  int64_t rowLanes = 32;                 // a Rows loop's lanes to a row (several rows a warp)
  std::string rowFirst = "lane";         // a Rows loop's lane's first column
  const Loop *columns = nullptr;         // the Columns loop being written
  std::ostringstream globals, resets;    // Columns: the counters, and their zeroing
  std::vector<std::string> scratchTypes; // per scratch buffer, its element type
  std::vector<int64_t> scratchBytes;
};

} // namespace

std::string cudaKernelPrologue() {
  return "// Generated by Sinter: one CUDA kernel per sinter.fusion.\n"
         "#include \"cuda/prologue.h\"\n";
}

runtime::LaunchShape cudaLaunchShape(int64_t blocks) {
  constexpr int64_t kMaxBlocks = 65535;
  runtime::LaunchShape shape;
  shape.block[0] = kCudaThreads;
  shape.grid[0] = std::clamp<int64_t>(blocks, 1, kMaxBlocks);
  return shape;
}

std::string cudaKernelText(const std::string &name, const std::vector<std::string> &parameters,
                           const std::vector<std::string> &casts, const std::string &body,
                           bool fibers) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os << "extern \"C\" __global__ void " << name << "(";
  for (size_t p = 0; p < parameters.size(); ++p)
    os << (p ? ", " : "") << parameters[p];
  os << ") {\n" << body << "}\n";
  // The simulator's entry (Note [The CUDA renderer]).
  os << "#ifdef SINTER_SIMULATED\nextern \"C\" void " << name
     << "_simulate(const void *shape, const void *options, void *const *buffers, void *status) "
        "{\n  ::sinter::simt::Options run = *static_cast<const ::sinter::simt::Options "
        "*>(options);\n"
     << (fibers ? "  run.fibers = true;\n" : "")
     << "  *static_cast<::sinter::Status *>(status) = sinter_simulate(\"" << name << "\", " << name
     << ", *static_cast<const ::sinter::runtime::LaunchShape *>(shape), run";
  for (const std::string &cast : casts)
    os << ",\n      " << cast;
  os << ");\n}\n#endif\n";
  return os.str();
}

std::optional<RenderProblem> renderCudaKernel(const KernelPlan &plan, const std::string &name,
                                              std::string &source, runtime::LaunchShape &shape) {
  CudaRenderer renderer(plan);
  std::optional<RenderProblem> problem = renderer.render(name, shape);
  if (!problem && renderer.scratch() != plan.scratchBytes)
    problem = RenderProblem{RenderProblem::Kind::ScratchMismatch, -1};
  if (!problem)
    source += renderer.text();
  return problem;
}

std::vector<int64_t> cudaScratchBytes(const KernelPlan &plan) {
  CudaRenderer renderer(plan);
  runtime::LaunchShape shape;
  if (renderer.render("scratch", shape))
    return {};
  return renderer.scratch();
}

} // namespace sinter::codegen
