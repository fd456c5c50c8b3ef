//===- CudaRendererTest.cpp - how the CUDA renderer walks and what it refuses ===//
//
// Plans written by hand (a KernelPlan is plain data): the walk each loop of
// a CUDA kernel takes (Note [Loops of a CUDA kernel] in
// compiler/lib/Renderers/CudaRenderer.cpp) and the plans it refuses, with
// the value and the reason. That the kernels it writes compute what the
// CPU's do is checked on the simulator (tests/cuda/simulated_kernels.cpp)
// and by NVRTC and ptxas (tests/cuda).
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CudaRenderer.h"
#include "sinter/Codegen/CpuRenderer.h"
#include "sinter/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sinter {
namespace {

using Plan = codegen::KernelPlan;

Plan::Value valueOf(std::string op, std::vector<int64_t> shape, std::vector<int> operands) {
  Plan::Value value;
  value.op = std::move(op);
  value.dtype = "f32";
  value.shape = std::move(shape);
  value.operands = std::move(operands);
  return value;
}

Plan::Value reduction(std::vector<int64_t> shape, int operand, std::vector<int64_t> dims,
                      Plan::Reduction how) {
  Plan::Value value = valueOf("reduce_sum", std::move(shape), {operand});
  value.reducedDims = std::move(dims);
  value.reduction = how;
  return value;
}

Plan::Value broadcast(std::vector<int64_t> shape, int operand, std::vector<int64_t> strides) {
  Plan::Value value = valueOf("broadcast_in_dim", std::move(shape), {operand});
  value.hasIndexMap = true;
  value.map.strides = std::move(strides);
  return value;
}

/// An elementwise plan of one loop over `inputs` whose result is the last
/// of `values`.
Plan elementwise(std::vector<Plan::Input> inputs, std::vector<Plan::Value> values) {
  Plan plan;
  plan.kind = Plan::Kind::Elementwise;
  plan.parts = 1;
  plan.inputs = std::move(inputs);
  plan.values = std::move(values);
  plan.results = {{static_cast<int>(plan.values.size()) - 1, 0}};
  plan.elements = plan.elementsOf(plan.results[0].value);
  return plan;
}

struct Rendered {
  std::optional<codegen::RenderProblem> problem;
  std::string source;
  runtime::LaunchShape shape;
};

Rendered render(const Plan &plan) {
  Rendered rendered;
  rendered.problem = codegen::renderCudaKernel(plan, "kernel0", rendered.source, rendered.shape);
  return rendered;
}

TEST(CudaRenderer, AColumnSumTakesAThreadPerColumnAndAChannelSumAWarpPerChannel) {
  // A bias gradient: the sum of 48 rows of 32 columns (too few rows to
  // split: Note [Split column reductions]).
  Rendered columns = render(
      elementwise({{"f32", {48, 32}}}, {reduction({32}, -1, {0}, Plan::Reduction::ColumnBlocks)}));
  ASSERT_FALSE(columns.problem) << columns.problem->detail;
  EXPECT_NE(columns.source.find("for (int64_t j = 0; j < 48; j += 1)"), std::string::npos)
      << columns.source;
  EXPECT_EQ(columns.source.find("__shfl"), std::string::npos) << columns.source;
  EXPECT_EQ(columns.shape.block[0], 256);
  EXPECT_EQ(columns.shape.grid[0], 1);
  // Batch-norm statistics: per channel of [2, 4, 8, 8], 128 elements in
  // runs of 64 (one division per run, not per dim).
  Rendered channels = render(
      elementwise({{"f32", {2, 4, 8, 8}}},
                  {reduction({1, 4, 1, 1}, -1, {0, 2, 3}, Plan::Reduction::TrailingBlocks)}));
  ASSERT_FALSE(channels.problem) << channels.problem->detail;
  EXPECT_NE(channels.source.find("for (int64_t j = lane; j < 128; j += 32)"), std::string::npos)
      << channels.source;
  EXPECT_NE(channels.source.find("j_left % 64u) * 1"), std::string::npos) << channels.source;
  EXPECT_NE(channels.source.find("j_left) * 256"), std::string::npos) << channels.source;
  EXPECT_NE(channels.source.find("if (lane == 0)"), std::string::npos) << channels.source;
  EXPECT_NE(channels.source.find("run.fibers = true"), std::string::npos) << channels.source;
}

TEST(CudaRenderer, AReductionReadAtManyElementsTakesOneBlock) {
  // x - column sums(x): computed where read, each of 2048 elements would
  // add its column again; one block computes the sums into shared memory
  // first, then the results.
  Plan centered = elementwise({{"f32", {64, 32}}},
                              {reduction({32}, -1, {0}, Plan::Reduction::ColumnBlocks),
                               broadcast({64, 32}, 0, {0, 1}), valueOf("sub", {64, 32}, {-1, 1})});
  Rendered rendered = render(centered);
  ASSERT_FALSE(rendered.problem) << rendered.problem->detail;
  EXPECT_NE(rendered.source.find("if (blockIdx.x == 0)"), std::string::npos) << rendered.source;
  EXPECT_NE(rendered.source.find("__shared__ float v0_all[32];"), std::string::npos)
      << rendered.source;
  EXPECT_NE(rendered.source.find("__syncthreads();"), std::string::npos) << rendered.source;
  EXPECT_NE(rendered.source.find("run.fibers = true"), std::string::npos) << rendered.source;
  EXPECT_EQ(rendered.shape.grid[0], 1);
  // A sum of column sums: the inner one's array read by the outer one.
  Rendered nested = render(
      elementwise({{"f32", {64, 32}}}, {reduction({32}, -1, {0}, Plan::Reduction::ColumnBlocks),
                                        reduction({}, 0, {0}, Plan::Reduction::General)}));
  ASSERT_FALSE(nested.problem) << nested.problem->detail;
  EXPECT_NE(nested.source.find("__shared__ float v1_all[1];"), std::string::npos) << nested.source;
  // Column sums of 8192 columns need 64 KiB: more than one block's shared
  // memory, refused with the reason.
  Rendered wide = render(elementwise(
      {{"f32", {4, 8192}}}, {reduction({8192}, -1, {0}, Plan::Reduction::ColumnBlocks),
                             broadcast({4, 8192}, 0, {0, 1}), valueOf("sub", {4, 8192}, {-1, 1})}));
  ASSERT_TRUE(wide.problem);
  EXPECT_EQ(wide.problem->kind, codegen::RenderProblem::Kind::UnsupportedOp);
  EXPECT_EQ(wide.problem->value, 1); // the broadcast
  EXPECT_NE(wide.problem->detail.find("read at many elements"), std::string::npos)
      << wide.problem->detail;
  EXPECT_NE(wide.problem->detail.find("one block cannot walk it: 65536 bytes of reductions, more "
                                      "than 48 KiB of shared memory"),
            std::string::npos)
      << wide.problem->detail;
  EXPECT_TRUE(wide.source.empty());
}

TEST(CudaRenderer, RefusesWritingOverAnInputAReductionReads) {
  // Column sums of in0 plus in1: in1 may be written over, in0 may not
  // (other threads read all of it).
  Plan plan = elementwise(
      {{"f32", {4, 8}}, {"f32", {8}}},
      {reduction({8}, -1, {0}, Plan::Reduction::ColumnBlocks), valueOf("add", {8}, {0, -2})});
  plan.inPlace = {{1, 0}};
  Rendered overIn1 = render(plan);
  ASSERT_FALSE(overIn1.problem) << overIn1.problem->detail;
  // The aliased pair is not __restrict__; the other input is.
  EXPECT_NE(overIn1.source.find("const float *in1, float *out0"), std::string::npos)
      << overIn1.source;
  EXPECT_NE(overIn1.source.find("const float *__restrict__ in0"), std::string::npos);
  plan.inPlace = {{0, 0}};
  Rendered overIn0 = render(plan);
  ASSERT_TRUE(overIn0.problem);
  EXPECT_EQ(overIn0.problem->value, 0);
  EXPECT_NE(overIn0.problem->detail.find("written over an input that a reduction reads"),
            std::string::npos)
      << overIn0.problem->detail;
}

/// x / row sums(x) over `rows` rows of `cols`: the sums broadcast along
/// each row; the quotients and the sums are the results.
Plan rowSums(int64_t rows, int64_t cols) {
  Plan plan;
  plan.kind = Plan::Kind::Rows;
  plan.rows = rows, plan.cols = cols;
  plan.inputs = {{"f32", {rows, cols}}};
  plan.values = {reduction({rows}, -1, {1}, Plan::Reduction::Row),
                 broadcast({rows, cols}, 0, {1, 0}), valueOf("div", {rows, cols}, {-1, 1})};
  plan.results = {{2, -1}, {0, -1}};
  return plan;
}

TEST(CudaRenderer, ARowPlanTakesAWarpPerRowOrOneBlockForAnotherRowsValue) {
  // Rows of 24: a warp per row.
  Rendered wide = render(rowSums(4, 24));
  ASSERT_FALSE(wide.problem) << wide.problem->detail;
  // Values first, then stores (Note [Values computed once]: the quotient
  // where it is read, its operands' locals before it); the rows' sums by
  // lane 0.
  EXPECT_NE(wide.source.find("const float e1 = in0[i];"), std::string::npos) << wide.source;
  EXPECT_NE(wide.source.find("const float e3 = v0(j2);\n    const float e4 = e1 / e3;"),
            std::string::npos)
      << wide.source;
  size_t value = wide.source.find("const float r0 = e4;");
  size_t stored = wide.source.find("out0[i] = r0;");
  ASSERT_NE(value, std::string::npos) << wide.source;
  EXPECT_LT(value, stored);
  EXPECT_NE(
      wide.source.find("if (lane == 0) {\n    const float e5 = v0(r);\n    const float r1 = e5;"),
      std::string::npos)
      << wide.source;
  EXPECT_NE(wide.source.find("for (int o = 16; o > 0; o /= 2)"), std::string::npos) << wide.source;
  EXPECT_EQ(wide.shape.grid[0], 1); // 4 rows: a warp each, 8 warps a block
  // Rows of 8 share a warp (Note [Row kernels on the GPU]): 8 lanes a row,
  // 4 rows a warp; the butterfly within each row's lanes, the row's first
  // lane's sum for all of them; lanes past the last row take no columns.
  Plan plan = rowSums(4, 8);
  Rendered rendered = render(plan);
  ASSERT_FALSE(rendered.problem) << rendered.problem->detail;
  for (const char *text :
       {"const int64_t slot = lane % 8;", "const int64_t r = r0 + lane / 8;",
        "for (int o = 4; o > 0; o /= 2)", "__shfl_xor_sync(0xffffffffu, acc, o, 8)",
        "__shfl_sync(0xffffffffu, acc, 0, 8)", "for (int64_t c = (live ? slot : 8); c < 8; c += 8)",
        "if (live && slot == 0) {\n    const float e5 = v0(r);\n    const float r1 = e5;"})
    EXPECT_NE(rendered.source.find(text), std::string::npos) << text << "\n" << rendered.source;
  EXPECT_EQ(rendered.shape.grid[0], 1);
  // 1000 rows of 10: 16 lanes a row, 2 rows a warp, 16 rows a block.
  Rendered many = render(rowSums(1000, 10));
  ASSERT_FALSE(many.problem) << many.problem->detail;
  EXPECT_EQ(many.shape.grid[0], 63) << many.source;
  // Every element reading row 0's sum is another row's value for rows 1-3:
  // one block computes every row's sum first (a warp per row), then the
  // results.
  plan.values[1].map.strides = {0, 0};
  Rendered otherRow = render(plan);
  ASSERT_FALSE(otherRow.problem) << otherRow.problem->detail;
  EXPECT_NE(otherRow.source.find("__shared__ float v0_all[4];"), std::string::npos)
      << otherRow.source;
  EXPECT_NE(otherRow.source.find("for (int64_t r = warp; r < 4; r += warps)"), std::string::npos)
      << otherRow.source;
  EXPECT_NE(otherRow.source.find("j2 = 0;\n    }\n    const float e3 = v0s(j2);"),
            std::string::npos)
      << otherRow.source;
  // A result of neither size.
  plan.values[1].map.strides = {1, 0};
  plan.inputs.push_back({"f32", {3}});
  plan.values.push_back(valueOf("neg", {3}, {-2}));
  plan.results.push_back({3, -1});
  // A result of neither size: no warp per row writes it; one block does,
  // each size in a loop of its own.
  Rendered oddResult = render(plan);
  ASSERT_FALSE(oddResult.problem) << oddResult.problem->detail;
  EXPECT_NE(oddResult.source.find("for (int64_t i = threadIdx.x; i < 3; i += blockDim.x)"),
            std::string::npos)
      << oddResult.source;
  EXPECT_NE(oddResult.source.find("for (int64_t i = threadIdx.x; i < 32; i += blockDim.x)"),
            std::string::npos)
      << oddResult.source;
}

TEST(CudaRenderer, AValueReadByManyIsComputedOncePerIndex) {
  // Note [Values computed once]: thirty steps, each reading the one before
  // twice (x * x, then x + x, ...), summed over each row and the sum taken
  // from the last step. As functions calling functions this is 2^30 calls
  // once inlined; computed where read, each step is one local in each
  // place it is read (the row sum's loop and the results' loop), and only
  // the row sum is a function.
  const int64_t rows = 8, cols = 10, steps = 30;
  Plan plan;
  plan.kind = Plan::Kind::Rows;
  plan.rows = rows, plan.cols = cols;
  plan.inputs = {{"f32", {rows, cols}}};
  for (int k = 0; k < steps; ++k) {
    int previous = k == 0 ? -1 : k - 1;
    plan.values.push_back(valueOf(k % 2 == 0 ? "mul" : "add", {rows, cols}, {previous, previous}));
  }
  plan.values.push_back(reduction({rows}, steps - 1, {1}, Plan::Reduction::Row));
  plan.values.push_back(broadcast({rows, cols}, steps, {1, 0}));
  plan.values.push_back(valueOf("sub", {rows, cols}, {steps - 1, steps + 1}));
  plan.results = {{steps + 2, -1}};
  Rendered rendered = render(plan);
  ASSERT_FALSE(rendered.problem) << rendered.problem->detail;
  auto count = [&](const std::string &text) {
    size_t n = 0;
    for (size_t at = rendered.source.find(text); at != std::string::npos;
         at = rendered.source.find(text, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("[&](int64_t i)"), 1u) << rendered.source;
  EXPECT_NE(rendered.source.find("auto v30 = [&](int64_t i)"), std::string::npos)
      << rendered.source;
  // Fifteen products and fifteen sums in each of the two places.
  EXPECT_EQ(count(" * e"), 30u) << rendered.source;
  EXPECT_EQ(count(" + e"), 30u) << rendered.source;
  if (!cuda::nvrtcVersion().ok()) {
    ASSERT_EQ(SINTER_EXPECT_NVRTC, 0) << cuda::nvrtcVersion().status();
    GTEST_SKIP() << cuda::nvrtcVersion().status();
  }
  StatusOr<std::string> ptx =
      cuda::compileWithNvrtc({.path = "chain.cu",
                              .source = codegen::cudaKernelPrologue() + rendered.source,
                              .arch = "90",
                              .includeDirs = {SINTER_KERNELS_DIR}});
  EXPECT_TRUE(ptx.ok()) << ptx.status();
}

TEST(CudaRenderer, RowsOfManyColumnsTakeABlockEach) {
  // x - max(x) over rows of `cols` columns: at 2048 columns and more a
  // block per row, its warps' maxima combined through shared memory.
  auto plan = [](int64_t rows, int64_t cols) {
    Plan p;
    p.kind = Plan::Kind::Rows;
    p.rows = rows, p.cols = cols;
    p.inputs = {{"f32", {rows, cols}}};
    Plan::Value max = reduction({rows}, -1, {1}, Plan::Reduction::Row);
    max.op = "reduce_max";
    p.values = {max, broadcast({rows, cols}, 0, {1, 0}), valueOf("sub", {rows, cols}, {-1, 1})};
    p.results = {{2, -1}, {0, -1}};
    return p;
  };
  Rendered wide = render(plan(3, 4096));
  ASSERT_FALSE(wide.problem) << wide.problem->detail;
  EXPECT_EQ(wide.shape.grid[0], 3) << "a block per row";
  for (const char *text :
       {"for (int64_t r = blockIdx.x; r < 3; r += gridDim.x) {", "__shared__ float v0_warps[8];",
        "for (int64_t c = threadIdx.x; c < 4096; c += 256) {",
        "if (lane == 0)\n        v0_warps[warp] = acc;\n      __syncthreads();",
        "if (threadIdx.x == 0) {\n    const float e5 = v0(r);\n    const float r1 = e5;"})
    EXPECT_NE(wide.source.find(text), std::string::npos) << text << " in\n" << wide.source;
  // The warps' values are read in warp order by every thread, then a
  // barrier before the next row writes the array again.
  EXPECT_NE(wide.source.find("acc = v0_warps[0];\n      for (int w = 1; w < 8; ++w) {\n        "
                             "float x = v0_warps[w];"),
            std::string::npos)
      << wide.source;
  EXPECT_NE(wide.source.find("v0_row = acc;\n      __syncthreads();"), std::string::npos)
      << wide.source;

  Rendered narrow = render(plan(64, 2047));
  ASSERT_FALSE(narrow.problem) << narrow.problem->detail;
  EXPECT_EQ(narrow.shape.grid[0], 8) << "a warp per row, 8 warps a block";
  EXPECT_EQ(narrow.source.find("__shared__"), std::string::npos) << narrow.source;
  EXPECT_EQ(narrow.source.find("__syncthreads"), std::string::npos) << narrow.source;
  EXPECT_NE(narrow.source.find("for (int64_t c = lane; c < 2047; c += 32) {"), std::string::npos)
      << narrow.source;
}

TEST(CudaRenderer, TallColumnSumsAreSplitAcrossBlocksAndCombinedByTheLastOfATile) {
  // The bias gradient of 96 columns over 1024 rows, scaled: three tiles of
  // 32 columns, each column's rows in 16 splits of 64 (Note [Split column
  // reductions]), 48 blocks; the splits' sums in a scratch buffer of
  // 16 x 96 floats.
  Plan plan = elementwise(
      {{"f32", {1024, 96}}, {"f32", {96}}},
      {reduction({96}, -1, {0}, Plan::Reduction::ColumnBlocks), valueOf("mul", {96}, {0, -2})});
  EXPECT_EQ(codegen::cudaScratchBytes(plan), (std::vector<int64_t>{16 * 96 * 4}));
  Rendered unplanned = render(plan);
  ASSERT_TRUE(unplanned.problem) << "a plan without the kernel's scratch";
  EXPECT_EQ(unplanned.problem->kind, codegen::RenderProblem::Kind::ScratchMismatch);
  plan.scratchBytes = codegen::cudaScratchBytes(plan);
  Rendered split = render(plan);
  ASSERT_FALSE(split.problem) << split.problem->detail;
  EXPECT_EQ(split.shape.grid[0], 48);
  for (const char *text :
       {"__device__ unsigned int kernel0_arrivals0[3];",
        "float *__restrict__ out0, float *__restrict__ scratch0)",
        "for (int64_t item = blockIdx.x; item < 48; item += gridDim.x) {",
        "const int64_t tile = item / 16, split = item % 16;",
        // Warp w takes rows w, w + 8, ... of its split's 64.
        "const int64_t j_end = (split + 1) * 64 < 1024 ? (split + 1) * 64 : 1024;",
        "for (int64_t j = split * 64 + warp; j < j_end; j += 8) {",
        "v0_warps[warp][lane] = o < 96 ? v0_part(o) : float(0);", "scratch0[split * 96 + o] = acc;",
        "__threadfence();", "last = atomicAdd(&kernel0_arrivals0[tile], 1u) == 15u;",
        // The last block of a tile: the splits in order, then the results.
        "const volatile float *p = scratch0;", "for (int64_t k = 1; k < 16; ++k) {",
        "float x = p[k * 96 + o];", "v0_total = acc;",
        "const float e3 = e1 * e2;\n      const float r0 = e3;", "out0[o] = r0;",
        "kernel0_arrivals0[tile] = 0u;", "extern \"C\" void kernel0_reset() {",
        "static_cast<float *>(buffers[3])"})
    EXPECT_NE(split.source.find(text), std::string::npos) << text << " in\n" << split.source;
  // The results only after every split's sum is in.
  EXPECT_LT(split.source.find("v0_total = acc;"), split.source.find("out0[o] = r0;"));

  // Columns of 256 rows with 64 tiles: four splits of 64 rows; of 64 rows,
  // one split: warp 0 combines and stores, with no scratch or counter.
  Plan wide = elementwise({{"f32", {64, 2048}}},
                          {reduction({2048}, -1, {0}, Plan::Reduction::ColumnBlocks)});
  EXPECT_TRUE(codegen::cudaScratchBytes(wide).empty());
  Rendered once = render(wide);
  ASSERT_FALSE(once.problem) << once.problem->detail;
  EXPECT_EQ(once.shape.grid[0], 64);
  EXPECT_EQ(once.source.find("atomicAdd"), std::string::npos) << once.source;
  EXPECT_EQ(once.source.find("scratch"), std::string::npos) << once.source;
  EXPECT_NE(once.source.find("v0_total = acc;"), std::string::npos) << once.source;
  wide.inputs[0].shape = {256, 2048};
  wide.values[0].shape = {2048};
  EXPECT_EQ(codegen::cudaScratchBytes(wide), (std::vector<int64_t>{4 * 2048 * 4}));

  // A column sum read through a transpose is read at another output: the
  // last block of a tile would not have it, so a thread per output.
  Plan transposed = elementwise(
      {{"f32", {1024, 4, 8}}},
      {reduction({4, 8}, -1, {0}, Plan::Reduction::ColumnBlocks), broadcast({8, 4}, 0, {1, 8})});
  transposed.values[1].op = "transpose";
  EXPECT_TRUE(codegen::cudaScratchBytes(transposed).empty());
  Rendered thread = render(transposed);
  ASSERT_FALSE(thread.problem) << thread.problem->detail;
  EXPECT_NE(thread.source.find("for (int64_t j = 0; j < 1024; j += 1)"), std::string::npos)
      << thread.source;
}

} // namespace
} // namespace sinter

namespace sinter {
namespace {

using Plan = codegen::KernelPlan;

TEST(CudaRenderer, APointwiseLoopTakesSixteenBytesAThreadWhereItsBuffersAreAligned) {
  // Note [Vector loads]: 4 f32 elements a thread, tested for alignment at
  // run time, the rest (here 3) one a thread; a thread per 4 elements.
  Plan::Value add = valueOf("add", {4099}, {-1, -2});
  Plan::Value scaled = valueOf("mul", {4099}, {0, -3});
  Plan plan = elementwise({{"f32", {4099}}, {"f32", {4099}}, {"f32", {4099}}}, {add, scaled});
  Rendered vectors = render(plan);
  ASSERT_FALSE(vectors.problem) << vectors.problem->detail;
  for (const char *wanted :
       {"const bool vectors = ((reinterpret_cast<unsigned long long>(in0) | "
        "reinterpret_cast<unsigned long long>(in1) | reinterpret_cast<unsigned long long>(in2) | "
        "reinterpret_cast<unsigned long long>(out0)) & 15ULL) == 0;",
        "SINTER_ASSUME_ALIGNED(in2);", "SINTER_ASSUME_ALIGNED(out0);",
        "; q < 1024; q += ", "const int64_t i = q * 4;", "const float e15 = in0[i + 3];",
        "const float e19 = e17 * e18;", "const float r0_3 = e19;", "out0[i + 3] = r0_3;",
        "for (int64_t i = (vectors ? 4096 : 0) + "})
    EXPECT_NE(vectors.source.find(wanted), std::string::npos) << wanted << "\n" << vectors.source;
  // Every value at the 4 indices before any store.
  EXPECT_LT(vectors.source.find("r0_3 = "), vectors.source.find("out0[i] = r0_0;"));
  EXPECT_EQ(vectors.shape.grid[0], (4099 + 1023) / 1024);

  // bf16: 8 elements are 16 bytes.
  for (Plan::Value *value : {&add, &scaled})
    value->dtype = "bf16";
  Rendered halves =
      render(elementwise({{"bf16", {4099}}, {"bf16", {4099}}, {"bf16", {4099}}}, {add, scaled}));
  ASSERT_FALSE(halves.problem) << halves.problem->detail;
  EXPECT_NE(halves.source.find("const int64_t i = q * 8;"), std::string::npos) << halves.source;

  // Small loops, and loops that reduce, keep one element a thread.
  Plan::Value small = valueOf("add", {1000}, {-1, -2});
  Rendered one = render(elementwise({{"f32", {1000}}, {"f32", {1000}}}, {small}));
  ASSERT_FALSE(one.problem);
  EXPECT_EQ(one.source.find("vectors"), std::string::npos) << one.source;
  Rendered sums = render(elementwise({{"f32", {48, 1024}}},
                                     {reduction({1024}, -1, {0}, Plan::Reduction::ColumnBlocks)}));
  ASSERT_FALSE(sums.problem) << sums.problem->detail;
  EXPECT_EQ(sums.source.find("vectors"), std::string::npos) << sums.source;

  // NVRTC joins each buffer's four loads and stores into 128-bit ones (in
  // the vector loop: without SINTER_ASSUME_ALIGNED it makes none).
  if (!cuda::nvrtcVersion().ok()) {
    ASSERT_EQ(SINTER_EXPECT_NVRTC, 0) << cuda::nvrtcVersion().status();
    GTEST_SKIP() << cuda::nvrtcVersion().status();
  }
  for (const char *arch : {"80", "90"}) {
    StatusOr<std::string> ptx =
        cuda::compileWithNvrtc({.path = "vectors.cu",
                                .source = codegen::cudaKernelPrologue() + vectors.source,
                                .arch = arch,
                                .includeDirs = {SINTER_KERNELS_DIR}});
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    // ld.global.v4.f32 or ld.global.nc.v4.f32 (through the read-only cache).
    size_t loads = 0, stores = 0;
    std::istringstream lines(*ptx);
    for (std::string line; std::getline(lines, line);) {
      bool vector = line.find(".v4.f32") != std::string::npos;
      loads += vector && line.find("ld.global.") != std::string::npos;
      stores += vector && line.find("st.global.") != std::string::npos;
    }
    EXPECT_GE(loads, 3u) << "sm_" << arch << ":\n" << *ptx;
    EXPECT_GE(stores, 1u) << "sm_" << arch;
  }
}

TEST(CudaRenderer, HalfValuesAreStoredInTwoBytesAndReducedOnlyInF32) {
  // Note [Half precision in kernels]: a bf16 add reads and writes
  // sinter_bf16 (two bytes) and computes in float; the value's local is
  // the storage type, which rounds.
  Plan::Value add = valueOf("add", {64}, {-1, -2});
  add.dtype = "bf16";
  Rendered sum = render(elementwise({{"bf16", {64}}, {"bf16", {64}}}, {add}));
  ASSERT_FALSE(sum.problem) << sum.problem->detail;
  EXPECT_NE(sum.source.find("const sinter_bf16 *__restrict__ in0"), std::string::npos)
      << sum.source;
  EXPECT_NE(sum.source.find("sinter_bf16 *__restrict__ out0"), std::string::npos) << sum.source;
  EXPECT_NE(sum.source.find("const sinter_bf16 e2 = e0 + e1;"), std::string::npos) << sum.source;
  // A reduction of half values is lowering's to convert (Note [Half
  // precision in f32]); both renderers refuse it, saying so.
  Plan::Value total = reduction({4}, -1, {1}, Plan::Reduction::Row);
  total.dtype = "f16";
  Plan rows = elementwise({{"f16", {4, 16}}}, {total});
  Rendered refused = render(rows);
  ASSERT_TRUE(refused.problem);
  EXPECT_EQ(refused.problem->detail, codegen::kHalfReduction);
  std::string cpu;
  rows.choices = codegen::cpuPlanChoices();
  std::optional<codegen::RenderProblem> onCpu = codegen::renderCpuKernel(rows, "kernel0", cpu);
  ASSERT_TRUE(onCpu);
  EXPECT_EQ(onCpu->detail, codegen::kHalfReduction);
}

} // namespace
} // namespace sinter

namespace sinter {
namespace {

using Plan = codegen::KernelPlan;

TEST(CudaRenderer, ChannelStatisticsOfManyElementsAreSplitAcrossBlocks) {
  // Batch-norm statistics: per channel of [32, 64, 56, 56], 100,352
  // elements (Note [Split column reductions]): a tile of one channel, 16
  // splits of 6272 elements, a block each (1024 blocks); thread t takes
  // every 256th element from t, the warp's lanes combine by the butterfly,
  // thread 0 the warps in order and, in the last block of a channel, the
  // splits in order.
  Plan plan = elementwise({{"f32", {32, 64, 56, 56}}},
                          {reduction({64}, -1, {0, 2, 3}, Plan::Reduction::TrailingBlocks)});
  EXPECT_EQ(codegen::cudaScratchBytes(plan), (std::vector<int64_t>{16 * 64 * 4}));
  plan.scratchBytes = codegen::cudaScratchBytes(plan);
  Rendered split = render(plan);
  ASSERT_FALSE(split.problem) << split.problem->detail;
  EXPECT_EQ(split.shape.grid[0], 1024);
  for (const char *text :
       {"__device__ unsigned int kernel0_arrivals0[64];",
        "const int64_t tile = item / 16, split = item % 16;", "const int64_t o = tile;",
        "for (int64_t j = split * 6272 + threadIdx.x; j < j_end; j += 256) {",
        "float x = __shfl_xor_sync(0xffffffffu, acc, o);", "if (threadIdx.x == 0) {",
        "scratch0[split * 64 + o] = acc;", "last = atomicAdd(&kernel0_arrivals0[tile], 1u) == 15u;",
        "for (int64_t k = 1; k < 16; ++k) {", "out0[o] = r0;"})
    EXPECT_NE(split.source.find(text), std::string::npos) << text << " in\n" << split.source;
  // Few elements a channel ([2, 4, 8, 8]: 128), or as many channels as
  // fill the GPU a warp each: a warp per channel, not split.
  Plan small = elementwise({{"f32", {2, 4, 8, 8}}},
                           {reduction({4}, -1, {0, 2, 3}, Plan::Reduction::TrailingBlocks)});
  EXPECT_TRUE(codegen::cudaScratchBytes(small).empty());
  Plan many = elementwise({{"f32", {2, 8192, 32, 32}}},
                          {reduction({8192}, -1, {0, 2, 3}, Plan::Reduction::TrailingBlocks)});
  EXPECT_TRUE(codegen::cudaScratchBytes(many).empty());
  Rendered warps = render(many);
  ASSERT_FALSE(warps.problem) << warps.problem->detail;
  EXPECT_EQ(warps.source.find("atomicAdd"), std::string::npos) << warps.source;
}

} // namespace
} // namespace sinter
