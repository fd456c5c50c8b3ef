//===- KernelPlan.h - a fusion's kernel, as plain data -----------*- C++ -*-===//
//
// Note [Kernel plans]
// Between fusion and rendering, each sinter.fusion becomes a KernelPlan: the
// decisions about its kernel, made once by one analysis (planCpuKernel in
// sinter/Codegen/CpuKernel.h) and read by everything after it. The kind of
// kernel and its domain (one loop over elements, loops per result of several
// sizes, or row by row: Note [Row kernels] in
// compiler/lib/Renderers/CpuRenderer.cpp); the inputs; the values in SSA order
// with their dtypes and shapes, each layout op's index map (strides and an
// offset into its operand: broadcast, transpose and slice are strides, never
// copies), and how the kernel holds each value (a function of the index
// recomputed where it is read, a local of the output loop, a row on the
// thread's stack, a scratch buffer), which values are valid only for the
// current row, and each reduction's strategy; the loop (independent part) each
// result is written in; the scratch buffers' sizes; and which results may be
// written over which inputs; and each op's attributes (constants, directions,
// dims, streams); and the choices its target made for it (Note [Plan
// choices]). The renderer writes the kernel from the plan alone
// (compiler/lib/Renderers, built without MLIR's headers), the planner asks
// the plan it was written from (in-place pairs: RenderedKernels::plans in
// sinter/Codegen/Target.h), and `sinter-translate --sinter-to-kernel-plans`
// prints it (tests/lit/codegen/kernel_plans.mlir). No MLIR types: a second
// renderer (CUDA C++) reads the same plan.
//
// Note [Plan choices]
// The analysis is the same for every target; what a target tunes it for is
// a KernelPlan::Choices that its planKernel hands to planFusion
// (sinter/Codegen/Target.h), recorded in the plan so the renderer reads the
// numbers the plan was made with rather than constants of its own. The
// CPU's (cpuPlanChoices in sinter/Codegen/CpuKernel.h): a row reduction's
// partial results in 8 lanes (an AVX2 vector of f32), 16 rows at least for
// a loop over rows of columns, column reductions 64 columns a thread, up to
// 256 KiB of the current row on each OpenMP thread's stack, and stored
// values in scratch. The CUDA target's (planCudaKernel): no lanes, column
// blocks or rows on a stack (the CUDA renderer chooses its walks itself,
// Note [Loops of a CUDA kernel]), and values recomputed where read rather
// than stored (Note [Values computed once]), so its plans say so instead of
// carrying the CPU's storage.
//
//===----------------------------------------------------------------------===
#ifndef SINTER_CODEGEN_KERNELPLAN_H
#define SINTER_CODEGEN_KERNELPLAN_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sinter::codegen {

struct KernelPlan {
  /// What the target chose when it planned the kernel (Note [Plan choices]).
  struct Choices {
    /// Partial results of a row reduction, combined pairwise at the end; a
    /// reduction over trailing dims of at least this many elements is
    /// computed in blocks of it (TrailingBlocks). 0: neither.
    int64_t lanes = 0;
    /// Rows an elementwise loop over rows of columns needs (else it is one
    /// loop over all elements).
    int64_t minRows = 0;
    /// Columns one thread reduces together in a column reduction; a
    /// reduction over leading dims with at least a quarter of this many
    /// outputs is computed in blocks of it (ColumnBlocks). 0: never.
    int64_t columnBlock = 0;
    /// Bytes of the current row's stored values a row kernel may keep on
    /// each thread's stack (RowStack); past it, or at 0, they go to scratch.
    int64_t rowStackBytes = 0;
    /// Whether values a kernel reads at other indices (reductions, stored
    /// values) are kept in scratch buffers (Scratch), or recomputed where
    /// read (Function), the scratch being the renderer's own.
    bool storesValues = true;
  };
  Choices choices;

  enum class Kind : uint8_t {
    /// Every result has one size: loops over its elements (one per
    /// independent part), pointwise values as locals.
    Elementwise,
    /// Row reductions over the same trailing `cols` elements of `rows` rows:
    /// one parallel loop over rows, each row's reductions, stored values and
    /// results in program order.
    Rows,
    /// Results of several sizes, no row domain: a loop per result.
    PerResult,
  };
  Kind kind = Kind::Elementwise;
  /// Elementwise: the results' elements; Rows: rows and columns.
  int64_t elements = 0;
  int64_t rows = 0, cols = 0;

  struct Input {
    std::string dtype; // "f32", "i64", "i1"
    std::vector<int64_t> shape;
  };
  std::vector<Input> inputs;

  /// Where a value's element at result coordinates (x_0, ..., x_r-1) is read
  /// in its operand: at offset + sum x_d * strides[d] of the operand's
  /// row-major elements (stride 0: broadcast along d).
  struct IndexMap {
    int64_t offset = 0;
    std::vector<int64_t> strides;
  };

  /// How the kernel holds a value.
  enum class Storage : uint8_t {
    Function, // a function of the index, computed where it is read
    Local,    // a local of the output loop, computed once per element
    RowStack, // the current row, in an array on the thread's stack
    Scratch,  // a scratch buffer of the value's size (or of its rows)
  };
  /// How a reduction is computed.
  enum class Reduction : uint8_t {
    None,
    Row,            // over trailing dims, a row at a time, in lanes
    ColumnBlocks,   // over leading dims: blocks of columns down the rows
    TrailingBlocks, // trailing dims after a kept one: contiguous blocks in lanes
    General,        // anything else: each result element's reduced coordinates in order
  };

  struct Value {
    std::string op; // "exp", "reduce_sum", "broadcast_in_dim", ...
    /// The element type of its one result ("" for an op of several).
    std::string dtype;
    std::vector<int64_t> shape;
    /// A value index (>= 0) or an input (-1 - input).
    std::vector<int> operands;
    /// Layout ops: where the operand is read.
    bool hasIndexMap = false;
    IndexMap map;
    /// The op's attributes, what its kernel code is written from: a
    /// broadcast's result dim for each operand dim, a transpose's
    /// permutation, an iota's dim (one), a slice's first coordinates and
    /// steps; a splat constant's value (`number` for f32, `integer` for the
    /// integer and bool types); a comparison's direction ("eq", "ne", "lt",
    /// "le", "gt", "ge"); a random op's distribution ("uniform", "normal")
    /// and stream.
    std::vector<int64_t> dims;
    std::vector<int64_t> start, step;
    bool splat = false;
    double number = 0;
    int64_t integer = 0;
    std::string direction;
    std::string distribution;
    uint64_t stream = 0;
    /// Reductions: the reduced dims.
    std::vector<int64_t> reducedDims;
    Reduction reduction = Reduction::None;
    Storage storage = Storage::Function;
    /// Rows: valid only for the current row (reductions, stored values and
    /// what is computed from them).
    bool perRow = false;
    /// Elementwise: the loop (independent part) that computes it, or -1.
    int part = -1;
    /// The scratch buffer that holds it, or -1.
    int scratch = -1;
  };
  std::vector<Value> values;

  struct Result {
    int value = 0; // as Value::operands
    int part = -1; // Elementwise: the loop that writes it
  };
  std::vector<Result> results;
  /// Elementwise: the number of loops, each writing its results together.
  int parts = 0;

  /// Bytes of each scratch buffer, in output-slot order after the results.
  std::vector<int64_t> scratchBytes;
  /// (input, result) pairs: the kernel reads the input only at the index it
  /// writes the result, so the result may be written over it (Notes
  /// [Donation] and [In-place kernels] in sinter/Passes/BufferAssignment.h).
  std::vector<std::pair<unsigned, unsigned>> inPlace;

  bool writesInPlace(unsigned input, unsigned result) const;

  /// An operand as Value::operands names one (a value, or -1 - input): its
  /// shape, dtype and element count, what every renderer reads of it.
  const std::vector<int64_t> &shapeOf(int operand) const {
    return operand < 0 ? inputs[-1 - operand].shape : values[operand].shape;
  }
  const std::string &dtypeOf(int operand) const {
    return operand < 0 ? inputs[-1 - operand].dtype : values[operand].dtype;
  }
  int64_t elementsOf(int operand) const {
    int64_t n = 1;
    for (int64_t d : shapeOf(operand))
      n *= d;
    return n;
  }
};

/// The plan as text, one line per input, value and result, then the scratch,
/// the in-place pairs and the target's choices: what the lit tests check.
std::string formatKernelPlan(const KernelPlan &plan);

} // namespace sinter::codegen

#endif // SINTER_CODEGEN_KERNELPLAN_H
