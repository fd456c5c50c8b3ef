//===- CpuKernelTest.cpp - generated C++ kernels against the reference ----===//
//
// Each case records ops with the C++ API, lowers the graph to the sinter
// dialect, fuses it into one sinter.fusion, renders that as C++, compiles it
// with the host compiler, runs it on the graph's inputs, and compares with
// the reference executor. The kernel computes in f32 (the reference in
// double, rounded per op), so values agree to a relative 1e-5.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CpuKernel.h"
#include "common/Spinners.h"
#include "sinter/Codegen/CpuRenderer.h"
#include "sinter/Codegen/CudaKernels.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Compare.h"
#include "sinter/Compiler/LowerLazyGraph.h"
#include "sinter/Compiler/ProgramTranslation.h"
#include "sinter/Passes/Passes.h"
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/CoreShare.h"
#include "sinter/runtime/Gemm.h"
#include "sinter/runtime/Program.h"
#include "sinter/sinter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <limits>
#include <map>
#include <optional>
#include <thread>

namespace {

using namespace sinter;
namespace F = nn::functional;
using Kernel = void (*)(const void *const *, void *const *);

double compare(const std::vector<double> &got, const std::vector<double> &expected);

/// The library call the CPU executable makes for `step` (runGemmOnHost), as
/// text: how many threads, and the call with its flags and sizes.
std::string hostCall(const codegen::LibraryStep &step) {
  const runtime::Gemm &g = step.gemm;
  std::string text = g.batch > 1
                         ? "a batch of " + std::to_string(g.batch) + ", one product per thread: "
                     : step.host.oneThread ? std::string("on one thread: ")
                                           : std::string("on the library's threads: ");
  auto dims = [](int64_t a, int64_t b, int64_t c) {
    return std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + ",";
  };
  if (step.host.openBlas)
    return text + "cblas_sgemm(CblasColMajor, " + (g.transa ? "CblasTrans" : "CblasNoTrans") +
           ", " + (g.transb ? "CblasTrans" : "CblasNoTrans") + ", " + dims(g.m, g.n, g.k);
  return text + "dnnl_sgemm(" + (g.transb ? "'T'" : "'N'") + ", " + (g.transa ? "'T'" : "'N'") +
         ", " + dims(g.n, g.m, g.k);
}

/// Compiles `source` with the host compiler and loads the library.
void loadLibrary(const std::string &source, codegen::CompiledLibrary &library, void *&handle) {
  std::string error;
  ASSERT_TRUE(codegen::compileHostLibrary(source, library, error)) << error << "\n" << source;
  // As runtime::CpuExecutable: OpenMP's threads outlive the library.
  handle = dlopen(library.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_NE(handle, nullptr) << dlerror();
}

/// Compiles `source` (kernels named kernel0, ...) and loads its first
/// kernel, or, with `gemm`, the library's entry point for matrix products.
void loadKernel(const std::string &source, codegen::CompiledLibrary &library, void *&handle,
                Kernel &kernel, runtime::HostGemm *gemm = nullptr) {
  ASSERT_NO_FATAL_FAILURE(loadLibrary(source, library, handle));
  if (gemm != nullptr) {
    *gemm = reinterpret_cast<runtime::HostGemm>(dlsym(handle, runtime::kHostGemmSymbol));
    ASSERT_NE(*gemm, nullptr);
    return;
  }
  kernel = reinterpret_cast<Kernel>(dlsym(handle, "kernel0"));
  ASSERT_NE(kernel, nullptr);
}

/// Compiles the graph of `results` into one kernel, runs it, and checks
/// every result against the reference executor. `loops`, when given, is the
/// number of element loops the kernel's source must have; `calls`, when
/// given, text its source must contain.
void checkKernels(const std::string &what, const std::vector<Tensor> &results, int loops = -1,
                  const std::string &calls = "") {
  SCOPED_TRACE(what);
  std::vector<lazy::NodePtr> outputs;
  for (const Tensor &result : results)
    outputs.push_back(lazy::node_of(result));
  mlir::MLIRContext context;
  context.loadDialect<ir::SinterDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module = compiler::lowerLazyGraph(context, outputs);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createSinterFusion());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  auto function = *module->getOps<mlir::func::FuncOp>().begin();
  // The one kernel: a fusion, or a library op the fusion leaves alone.
  llvm::SmallVector<mlir::Operation *> kernels;
  for (mlir::Operation &op : function.getBody().front())
    if (mlir::isa<ir::FusionOp>(op) || codegen::isLibraryKernel(&op))
      kernels.push_back(&op);
  ASSERT_EQ(kernels.size(), 1u) << "expected the whole graph in one kernel";
  mlir::Operation *kernelOp = kernels.front();
  int64_t count = 0;
  std::vector<std::vector<int64_t>> scratch;
  mlir::FailureOr<std::string> source =
      codegen::renderCpuKernels(kernelOp, "kernel", count, &scratch);
  ASSERT_TRUE(mlir::succeeded(source));
  ASSERT_EQ(count, 1);
  // A matrix product is a library call of the Program, run from its
  // descriptor (Note [Matrix products as data]); the rest are kernels.
  std::optional<codegen::LibraryStep> step = codegen::cpuLibraryStep(kernelOp);
  if (step) {
    EXPECT_EQ(source->find("extern \"C\""), std::string::npos) << *source;
    EXPECT_LT(loops, 0) << "a library call has no loops";
    std::string call = hostCall(*step);
    EXPECT_NE(call.find(calls), std::string::npos) << "no " << calls << " in " << call;
  }
  if (!step && loops >= 0) {
    // Loops over elements, or over rows of columns (Note [The column
    // beside the index]).
    int found = 0;
    for (const char *loop : {"for (int64_t i = 0;", "for (int64_t o = 0;"})
      for (size_t at = source->find(loop); at != std::string::npos; at = source->find(loop, at + 1))
        ++found;
    EXPECT_EQ(found, loops) << *source;
  }
  if (!step && !calls.empty()) {
    EXPECT_NE(source->find(calls), std::string::npos) << "no " << calls << " in\n" << *source;
  }
  codegen::CompiledLibrary library;
  void *handle = nullptr;
  Kernel kernel = nullptr;
  runtime::HostGemm gemm = nullptr;
  ASSERT_NO_FATAL_FAILURE(loadKernel(*source, library, handle, kernel, step ? &gemm : nullptr));

  // The fusion's operands are function arguments: the graph's data nodes in
  // topological order.
  std::vector<const lazy::Node *> arguments;
  for (const lazy::Node *node : lazy::topological_order(outputs))
    if (node->op == lazy::Op::Data)
      arguments.push_back(node);
  std::vector<std::shared_ptr<const lazy::Value>> inputs;
  for (mlir::Value operand : kernelOp->getOperands()) {
    if (auto constant = operand.getDefiningOp<ir::ConstantOp>()) {
      // A splat constant (the seed gradient of backward): a filled buffer.
      auto dense = mlir::cast<mlir::DenseElementsAttr>(constant.getValue());
      ASSERT_TRUE(dense.isSplat() && dense.getElementType().isF32());
      inputs.push_back(std::make_shared<lazy::Value>(
          std::vector<double>(dense.getNumElements(), dense.getSplatValue<float>()), DType::f32));
      continue;
    }
    auto arg = mlir::dyn_cast<mlir::BlockArgument>(operand);
    ASSERT_TRUE(arg) << "a kernel input is computed outside the kernel";
    inputs.push_back(arguments[arg.getArgNumber()]->value);
  }
  std::vector<const void *> inputPointers;
  for (const auto &value : inputs)
    inputPointers.push_back(value->bytes());
  // The kernel's results (in the function's return order), then its scratch.
  auto returned = function.getBody().front().getTerminator()->getOperands();
  std::vector<lazy::Value::Bytes> resultBytes(kernelOp->getNumResults());
  std::vector<void *> outputPointers;
  for (mlir::OpResult result : kernelOp->getOpResults()) {
    auto type = mlir::cast<mlir::ShapedType>(result.getType());
    int64_t bytes = type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    resultBytes[result.getResultNumber()] = lazy::Value::allocate(std::max<int64_t>(bytes, 1));
    outputPointers.push_back(resultBytes[result.getResultNumber()].get());
  }
  std::vector<std::vector<uint8_t>> scratchBuffers;
  for (int64_t size : scratch.at(0))
    outputPointers.push_back(scratchBuffers.emplace_back(size).data());
  if (step)
    runtime::runGemmOnHost(gemm, step->gemm, step->host,
                           static_cast<const float *>(inputPointers[step->operands[0]]),
                           static_cast<const float *>(inputPointers[step->operands[1]]),
                           static_cast<float *>(outputPointers[0]));
  else
    kernel(inputPointers.data(), outputPointers.data());
  double worst = 0;
  size_t checked = 0;
  for (size_t j = 0; j < results.size(); ++j) {
    auto result = mlir::dyn_cast<mlir::OpResult>(returned[j]);
    ASSERT_TRUE(result && result.getOwner() == kernelOp)
        << "result " << j << " is not the kernel's";
    const lazy::Node &out = *outputs[j];
    lazy::Value value(resultBytes[result.getResultNumber()], numel(out.shape), out.dtype);
    std::vector<double> expected;
    {
      reference::ReferenceGuard oracle;
      expected = results[j].to_vector<double>();
    }
    worst = std::max(worst, compare(value.elements(), expected));
    checked += expected.size();
  }
  std::printf("KERNEL OK  %-26s %zu elements, max diff %.2e%s\n", what.c_str(), checked, worst,
              library.cacheHit ? " (cached)" : "");
  dlclose(handle);
}

void checkKernel(const std::string &what, const Tensor &output, int loops = -1,
                 const std::string &calls = "") {
  checkKernels(what, {output}, loops, calls);
}

/// Element-wise comparison within a relative 1e-5 of the largest value
/// (compare_values); returns the largest difference.
double compare(const std::vector<double> &got, const std::vector<double> &expected) {
  Comparison c =
      compare_values("kernel result", got, expected, {.of_largest = 1e-5, .absolute = 1e-6});
  EXPECT_TRUE(c.ok) << c.message;
  return c.worst_difference;
}

Tensor neg_of(const Tensor &x) { return Scalar(0.0) - x; }

Tensor data(const Shape &shape, int salt = 0) {
  std::vector<float> values;
  for (int64_t i = 0; i < numel(shape); ++i)
    values.push_back(std::sin(1.7f * static_cast<float>(i) + static_cast<float>(salt)) * 2.0f);
  return from_vector(values, shape);
}

TEST(CpuKernel, Softmax) { checkKernel("softmax", F::softmax(data({4, 8}), 1)); }

TEST(CpuKernel, RowMaximaKeepNaNsAndRowValuesSpreadAlongTheirRows) {
  // Rows of 40 are reduced in eight lanes (32 columns) and a tail of 8; a
  // NaN in a lane, in the tail, or in a row of -infinity is the row's
  // maximum, as in the reference. The softmaxes read each row's maximum and
  // sum at the row number (a broadcast of a per-row value), over two and
  // four dims.
  std::vector<float> values = data({2, 3, 4, 40}).to_vector<float>();
  values[1 * 40 + 3] = NAN;
  values[5 * 40 + 37] = NAN;
  for (int c = 0; c < 40; ++c)
    values[7 * 40 + c] = c == 20 ? NAN : -INFINITY;
  for (int c = 0; c < 40; ++c)
    values[9 * 40 + c] = -INFINITY;
  Tensor x = from_vector(values, {2, 3, 4, 40});
  checkKernel("row maxima with NaNs", x.amax({3}));
  // Not shift-invariant as a softmax is: each row's own maximum and mean.
  Tensor y = data({2, 3, 4, 40}, 5) * (arange(24).to(DType::f32).reshape({2, 3, 4, 1}) + 1.0);
  checkKernel("rows minus their maxima", y - y.amax({3}, true));
  checkKernel("rows minus their means", y - y.mean({3}, true) * 0.5);
  checkKernel("softmax over 4 dims", F::softmax(x, 3));
  checkKernel("softmax over rows of 40", F::softmax(data({24, 40}, 3), 1));
}

TEST(CpuKernel, ColumnsOfBroadcastsTransposesAndSlices) {
  // Rows of 40 columns: each output loop counts the column beside the index
  // (Note [The column beside the index]), and every operand read at another
  // index (a bias, a transpose, a slice, a broadcast over a middle dim, an
  // iota along the columns, a reshape to another last dim) gets its own.
  Tensor x = data({3, 5, 40}), bias = data({40}, 1);
  checkKernel("bias and gelu over columns", F::gelu(x + bias));
  checkKernel("transposed, reshaped", data({40, 15}, 2).t().reshape({3, 5, 40}) * x + bias);
  checkKernel("strided slice", data({3, 5, 80}, 3).slice(2, 1, 80, 2) + bias);
  checkKernel("broadcast over a middle dim", data({3, 1, 40}, 4).expand({3, 5, 40}) * x);
  checkKernel("iota along the columns", arange(40).to(DType::f32) + x);
  checkKernel("another last dim", (x + bias).reshape({3, 10, 20}) * data({3, 10, 20}, 5));
  checkKernel("a last dim merged", exp(data({3, 5, 8}, 6)).reshape({3, 40}) + bias);
  checkKernel("a last dim split", exp(x + bias).reshape({3, 5, 4, 10}).transpose(1, 2));
}

TEST(CpuKernel, LayerNorm) {
  checkKernel("layer_norm", F::layer_norm(data({3, 16}), {16}, data({16}, 1), data({16}, 2)));
}

TEST(CpuKernel, GeluTanh) { checkKernel("gelu tanh", F::gelu(data({2, 5}), "tanh")); }

TEST(CpuKernel, AdamUpdate) {
  Tensor p = data({64}), m = data({64}, 1), v = abs(data({64}, 2)), lr = full({}, 0.01);
  checkKernel("adam update", p - lr * m / (sqrt(v) + 1e-8));
}

TEST(CpuKernel, TransposedAndSlicedInputs) {
  Tensor x = data({6, 4}), y = data({4, 3}, 1);
  checkKernel("transpose slice", exp(x.t().slice(1, 1, 7, 2)) * y);
  Tensor bias = data({4}, 2);
  checkKernel("broadcast bias", relu(x + neg_of(bias)).transpose(0, 1));
}

TEST(CpuKernel, CausalMaskedSoftmax) {
  Tensor scores = data({5, 5});
  Tensor rows = arange(5).unsqueeze(1), cols = arange(5);
  checkKernel("causal softmax", F::softmax(scores.masked_fill(cols > rows, -INFINITY), -1));
  // Rows of 41 (five lanes' worth and a tail), as attention's, with the
  // mask an input (another kernel's result): it is read as bytes and the
  // select takes both arms, the forms GCC vectorises (a bool load, or an arm
  // evaluated only when taken, kept the loop scalar).
  std::vector<bool> causal;
  for (int r = 0; r < 41; ++r)
    for (int c = 0; c < 41; ++c)
      causal.push_back(c > r);
  Tensor masked = data({2, 3, 41, 41}).masked_fill(from_vector(causal, {41, 41}), -INFINITY);
  checkKernel("causal softmax, rows of 41", F::softmax(masked, -1), -1, "sinter_select<float>(");
  checkKernel("a mask read as bytes", F::softmax(masked, -1), -1,
              "reinterpret_cast<const uint8_t *>(in");
  // A mask computed in the row kernel and read twice: kept on the row's
  // stack as bools, read back as bytes.
  Tensor scores41 = data({6, 41}, 3), keep = scores41 > 0.5;
  checkKernel("a bool kept on the row stack",
              F::softmax(scores41.masked_fill(keep, -INFINITY), -1) * keep.to(DType::f32), -1,
              "alignas(64) bool ");
}

/// Parses `text` (sinter dialect) into `module` in `context` and fuses it.
void parseAndFuse(const char *text, mlir::MLIRContext &context,
                  mlir::OwningOpRef<mlir::ModuleOp> &module) {
  context.loadDialect<ir::SinterDialect, mlir::func::FuncDialect>();
  module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  pm.addNestedPass<mlir::func::FuncOp>(createSinterFusion());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
}

TEST(Fusion, AsksTheTargetWhichOpsItRunsAsLibraryCalls) {
  // Note [Fusion asks the target]: an op the target runs as a library call
  // stays outside every fusion, and the explanation names the target.
  const char *text = R"mlir(
    func.func @step(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
      %e = sinter.exp %a : tensor<64xf32>
      %s = sinter.add %e, %b : tensor<64xf32>
      %t = sinter.mul %s, %b : tensor<64xf32>
      return %t : tensor<64xf32>
    }
  )mlir";
  auto fuse = [&](const fusion::FusionRules &rules, std::vector<std::string> &remarks) {
    mlir::MLIRContext context;
    context.loadDialect<ir::SinterDialect, mlir::func::FuncDialect>();
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
      remarks.push_back(diagnostic.str());
      return mlir::success();
    });
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    mlir::PassManager pm(&context);
    pm.addNestedPass<mlir::func::FuncOp>(passes::createSinterFusion({.explain = true}, rules));
    EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
    // Where each op ended up: "fused" inside a sinter.fusion, else "alone".
    std::map<std::string, std::string> where;
    module->walk([&](mlir::Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "sinter" &&
          !mlir::isa<ir::FusionOp, ir::YieldOp>(op))
        where[op->getName().getStringRef().str()] =
            op->getParentOfType<ir::FusionOp>() ? "fused" : "alone";
    });
    return where;
  };
  std::vector<std::string> remarks;
  std::map<std::string, std::string> structural = fuse({}, remarks);
  EXPECT_EQ(structural["sinter.exp"], "fused");
  EXPECT_EQ(structural["sinter.add"], "fused");
  remarks.clear();
  std::map<std::string, std::string> asked =
      fuse({.isLibraryCall = [](mlir::Operation *op) { return mlir::isa<ir::ExpOp>(op); },
            .target = "test"},
           remarks);
  EXPECT_EQ(asked["sinter.exp"], "alone");
  EXPECT_EQ(asked["sinter.add"], "fused");
  EXPECT_EQ(asked["sinter.mul"], "fused");
  bool named = false;
  for (const std::string &remark : remarks)
    named |=
        remark.find("the test target runs 'sinter.exp' as a library call") != std::string::npos;
  EXPECT_TRUE(named) << ::testing::PrintToString(remarks);
}

TEST(CpuKernel, IntegerDivisionNeverTraps) {
  // The frontend divides floats only (`/` is true division), so the graph
  // is written in the dialect. By zero: 0, as the reference executor. The
  // lowest value over -1 wraps to itself, where x86's division instruction
  // raises SIGFPE; and the select computes both arms (sinter_select), so a
  // division whose result it discards must not trap either.
  const char *text = R"mlir(
    func.func @divide(%a: tensor<6xi64>, %b: tensor<6xi64>, %p: tensor<6xi1>)
        -> (tensor<6xi64>, tensor<6xi64>) {
      %q = sinter.div %a, %b : tensor<6xi64>
      %r = sinter.select %p, %a, %q : tensor<6xi1>, tensor<6xi64>
      return %q, %r : tensor<6xi64>, tensor<6xi64>
    }
  )mlir";
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ASSERT_NO_FATAL_FAILURE(parseAndFuse(text, context, module));
  auto function = *module->getOps<mlir::func::FuncOp>().begin();
  auto fusions = function.getBody().front().getOps<ir::FusionOp>();
  ASSERT_EQ(std::distance(fusions.begin(), fusions.end()), 1);
  int64_t count = 0;
  std::vector<std::vector<int64_t>> scratch;
  mlir::FailureOr<std::string> source =
      codegen::renderCpuKernels(*fusions.begin(), "kernel", count, &scratch);
  ASSERT_TRUE(mlir::succeeded(source));
  codegen::CompiledLibrary library;
  void *handle = nullptr;
  Kernel kernel = nullptr;
  ASSERT_NO_FATAL_FAILURE(loadKernel(*source, library, handle, kernel));
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  int64_t a[6] = {lowest, 7, -7, 9, lowest, 5}, b[6] = {-1, 2, 2, 0, 3, -1};
  bool p[6] = {true, false, false, true, false, false};
  int64_t q[6] = {}, r[6] = {};
  // The fusion's operands are the function's arguments, in order; its
  // results, then its scratch buffers.
  const void *inputs[3] = {a, b, p};
  std::vector<void *> outputs = {q, r};
  std::vector<std::vector<uint8_t>> scratchBuffers;
  for (int64_t size : scratch.at(0))
    outputs.push_back(scratchBuffers.emplace_back(size).data());
  kernel(inputs, outputs.data());
  const int64_t quotients[6] = {lowest, 3, -3, 0, lowest / 3, -5};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(q[i], quotients[i]) << a[i] << " / " << b[i];
    EXPECT_EQ(r[i], p[i] ? a[i] : quotients[i]) << "element " << i;
  }
  dlclose(handle);
}

TEST(CpuKernel, DropoutMatchesTheReferenceMask) {
  manual_seed(9);
  checkKernel("dropout", F::dropout(data({16, 8}), 0.3));
}

TEST(CpuKernel, ReductionsOverLeadingDims) {
  // A bias gradient: the sum over the batch, a kernel of its own.
  checkKernel("sum over dim 0", data({5, 3, 4}).sum({0, 2}));
  checkKernel("max over dim 0", data({6, 4}).amax({0}));
  // Wide enough for column blocks: several blocks and a partial last one.
  checkKernel("sum over leading dims, 3 column blocks", data({7, 5, 150}).sum({0, 1}));
  checkKernel("max over dim 0, one short block", data({9, 20}).amax({0}));
  checkKernel("sum over dim 0 of 3", data({6, 4, 30}).sum({0}));
}

TEST(CpuKernel, ReductionsOfTrailingBlocksAroundKeptDims) {
  // A batch norm's statistics: N, H and W of NCHW summed, C kept. Each
  // channel adds contiguous blocks of H x W, each reduced in lanes: blocks of
  // 63 (seven lanes' worth and a tail of 7), of 40 with two kept dims around
  // a reduced one, and of 16 (under four lanes' worth: added in order).
  Tensor x = data({8, 6, 7, 9});
  checkKernel("batch norm sums", x.sum({0, 2, 3}), -1, "const int64_t base = ");
  checkKernel("kept dims around a reduced one", data({2, 3, 4, 40}, 1).sum({1, 3}));
  checkKernel("short blocks", data({3, 5, 4, 4}, 2).sum({0, 2, 3}));
  std::vector<int64_t> counts;
  for (int64_t i = 0; i < 8 * 6 * 63; ++i)
    counts.push_back((i * 7919) % 1000 - 500);
  checkKernel("integer sums", from_vector(counts, {8, 6, 7, 9}).sum({0, 2, 3}));
  // A NaN in a block's lanes, in its tail, and a channel of -infinity.
  std::vector<float> values = x.to_vector<float>();
  values[(0 * 6 + 1) * 63 + 5] = NAN;
  values[(3 * 6 + 2) * 63 + 60] = NAN;
  for (int n = 0; n < 8; ++n)
    for (int p = 0; p < 63; ++p)
      values[(n * 6 + 4) * 63 + p] = -INFINITY;
  checkKernel("maxima with NaNs", from_vector(values, {8, 6, 7, 9}).amax({0, 2, 3}));
}

TEST(CpuKernel, DeepChainsOfReusedValuesStayLinear) {
  // Each value used twice: recomputing at every use would cost 2^30 per element.
  Tensor v = data({64});
  for (int i = 0; i < 30; ++i)
    v = v + tanh(v) * 0.1;
  checkKernel("30-deep residual chain", v);
}

TEST(CpuKernel, ConversionsMatchTheReference) {
  // Out-of-range floats wrap, NaN and infinities convert to 0, as the reference.
  Tensor x = from_vector<float>({1.5f, -2.5f, 3e9f, -3e9f, NAN, INFINITY, 1e20f}, {7});
  checkKernel("f32 to i32", x.to(DType::i32));
  checkKernel("f32 to i64", x.to(DType::i64));
  // max(-0, +0) is -0 (ties keep the first operand): 1 / it is -inf.
  checkKernel("signed zeros through max", 1.0 / maximum(full({2}, -0.0), full({2}, 0.0)));
}

TEST(CpuKernel, LibraryOps) {
  Tensor a = data({2, 3, 4}), b = data({2, 4, 5}, 1), w = data({5, 4}, 2);
  checkKernel("matmul batched", matmul(a, b));
  checkKernel("matmul shared, transposed", matmul(a, w.t()));
  // A weight gradient: the left operand transposed (Xᵀ·dY).
  checkKernel("matmul weight gradient", matmul(data({40, 37}).t(), data({40, 5}, 1)));
  checkKernel("conv2d grouped, strided", F::conv2d(data({2, 4, 7, 6}), data({6, 2, 3, 2}, 1),
                                                   Tensor(), {2, 1}, {1, 1}, {1, 2}, 2));
  // Padding wider than the image reaches: the first tap's columns all lie in
  // it (no column of the image is read twice or outside it).
  checkKernel("conv2d padded past the image", F::conv2d(data({1, 1, 3, 3}), data({1, 1, 1, 2}, 1),
                                                        Tensor(), {1, 1}, {0, 5}, {1, 12}));
  // Taps partly in the padding, partly in the image, at a column stride of 2.
  checkKernel(
      "conv2d strided, dilated, padded",
      F::conv2d(data({1, 1, 5, 7}), data({1, 1, 1, 3}, 1), Tensor(), {1, 2}, {0, 3}, {1, 2}));
  checkKernel("max_pool2d", F::max_pool2d(data({2, 3, 7, 7}), {3, 3}, {2, 2}, {1, 1}));
  checkKernel("avg_pool2d", F::avg_pool2d(data({1, 2, 6, 6}), {2, 3}, {2, 1}, {1, 1}));
  Tensor ids = from_vector<int64_t>({3, 0, 3, 1, 2, 2}, {2, 3});
  checkKernel("gather (embedding)", F::embedding(ids, data({5, 4})));
  checkKernel("index_select dim 1", index_select(data({3, 5, 2}), 1, ids));
  checkKernel("concat", cat({data({2, 3}), data({2, 1}, 1), data({2, 2}, 2)}, 1));
  checkKernel("argmax", data({4, 6, 3}).argmax(1));
}

/// The call a single row-major product with a transposed left matrix and
/// every dimension at least 256 starts with (Note [Which library
/// multiplies]): OpenBLAS's where oneDNN runs AVX2 kernels, oneDNN's where it
/// runs AVX-512. A matrix product's library call is column-major, where the
/// right matrix is A (Note [Matrix products as data]).
std::string largeTransposedProduct(bool transposeB, int64_t m, int64_t n, int64_t k) {
  auto dims = [](int64_t a, int64_t b, int64_t c) {
    return std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + ",";
  };
  std::string b = transposeB ? "CblasTrans" : "CblasNoTrans";
  if (codegen::oneDnnRunsAvx512())
    return std::string("dnnl_sgemm('T', ") + (transposeB ? "'T'" : "'N'") + ", " + dims(m, n, k);
  return "cblas_sgemm(CblasColMajor, " + b + ", CblasTrans, " + dims(n, m, k);
}

TEST(CpuKernel, TransposedProductsRunInTheLibraryThatIsFasterForThem) {
  // Note [Which library multiplies]: where oneDNN runs AVX2 kernels, a single
  // product with the left matrix transposed and every dimension at least 256
  // runs in OpenBLAS, and a smaller one, or one of a batch, in oneDNN; where
  // it runs AVX-512 kernels every product runs in oneDNN. ctest runs this
  // case twice, once with DNNL_MAX_CPU_ISA=AVX2 (codegen.matmul_library_avx2),
  // so both choices are compiled and checked on an AVX-512 machine. Sizes are
  // no multiple of any block.
  std::printf("oneDNN runs %s kernels here\n", codegen::oneDnnRunsAvx512() ? "AVX-512" : "AVX2");
  checkKernel("weight gradient", matmul(data({300, 260}).t(), data({300, 257}, 1)), -1,
              largeTransposedProduct(false, 260, 257, 300));
  checkKernel("both transposed", matmul(data({256, 270}).t(), data({258, 256}, 1).t()), -1,
              largeTransposedProduct(true, 270, 258, 256));
  checkKernel("k under 256 (oneDNN)", matmul(data({255, 300}).t(), data({255, 257}, 1)), -1,
              "dnnl_sgemm('T', 'N', 300, 257, 255,");
  checkKernel("a batch (oneDNN)",
              matmul(data({2, 300, 260}).transpose(1, 2), data({2, 300, 257}, 1)), -1,
              "dnnl_sgemm('T', 'N', 260, 257, 300,");
}

TEST(CpuKernel, OneDnnCapsBelowAvx512AreNamed) {
  // oneDNN 2.6's ISA names below avx512_core take its AVX-512 kernels away;
  // the others, ALL, and a value oneDNN ignores keep them.
  for (const char *below :
       {"SSE41", "AVX", "AVX2", "avx2", " AVX2 ", "AVX2_VNNI", "AVX512_MIC", "AVX512_MIC_4OPS"})
    EXPECT_FALSE(codegen::oneDnnCapKeepsAvx512(below)) << below;
  for (const char *kept : {"AVX512_CORE", "avx512_core_vnni", "AVX512_CORE_BF16", "AVX512_CORE_AMX",
                           "ALL", "AVX2X", ""})
    EXPECT_TRUE(codegen::oneDnnCapKeepsAvx512(kept)) << kept;
}

TEST(CpuKernel, OneDnnIsaFollowsItsCap) {
  // DNNL_MAX_CPU_ISA below AVX-512 (the AVX2 run of this suite) takes
  // oneDNN's AVX-512 kernels away, and with them the products it would take.
  const char *cap = std::getenv("DNNL_MAX_CPU_ISA");
  if (cap == nullptr || std::string(cap) != "AVX2")
    GTEST_SKIP() << "runs under DNNL_MAX_CPU_ISA=AVX2 (ctest codegen.matmul_library_avx2)";
  EXPECT_FALSE(codegen::oneDnnRunsAvx512());
}

TEST(CpuKernel, SmallProductsRunOnOneThread) {
  // Note [Small products on one thread]: a single product under 2^20 flops
  // runs on the calling thread, and the kernel leaves the thread count as it
  // found it; a larger one, and a batch (one product per thread), do not.
  using ThreadCount = int (*)();
  using SetThreadCount = void (*)(int);
  checkKernel("small product (64 x 256 x 10)", matmul(data({64, 256}), data({256, 10}, 1)), -1,
              "on one thread: dnnl_sgemm('N', 'N', 64, 10, 256,");
  // The OpenMP runtime the kernel library loaded: a thread count set before
  // the call (3, which nothing else sets) is the count after it.
  void *openmp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(openmp, nullptr) << "the kernel library did not load OpenMP";
  auto threads = reinterpret_cast<ThreadCount>(dlsym(openmp, "omp_get_max_threads"));
  auto setThreads = reinterpret_cast<SetThreadCount>(dlsym(openmp, "omp_set_num_threads"));
  ASSERT_NE(threads, nullptr);
  ASSERT_NE(setThreads, nullptr);
  int before = threads();
  setThreads(3);
  checkKernel("small product again", matmul(data({64, 256}, 2), data({256, 10}, 3)), -1,
              "on one thread: ");
  EXPECT_EQ(threads(), 3);
  setThreads(before);
  dlclose(openmp);
  checkKernel("large product (160 x 256 x 256)", matmul(data({160, 256}), data({256, 256}, 1)), -1,
              "on the library's threads: dnnl_sgemm('N', 'N', 160, 256, 256,");
  checkKernel("a batch of small products", matmul(data({2, 64, 256}), data({2, 256, 10}, 1)), -1,
              "a batch of 2, one product per thread: dnnl_sgemm('N', 'N', 64, 10, 256,");
}

TEST(CpuKernel, LibraryGradients) {
  // The gradient ops of convolution, pooling and embedding, from autograd.
  auto gradOf = [](const Tensor &input, auto f) {
    Tensor x = input.detach().requires_grad_();
    f(x).sum().backward();
    return x.grad();
  };
  Tensor filter = data({4, 3, 3, 3}, 1);
  checkKernel("conv2d backward input", gradOf(data({2, 3, 6, 6}), [&](const Tensor &x) {
                return F::conv2d(x, filter, Tensor(), {2, 2}, {1, 1});
              }));
  Tensor image = data({2, 3, 6, 6});
  // 4 filters of 27 taps: the gradient is computed transposed, [27 x 4],
  // then put in place (Note [Transposed filter gradients]); 128 filters:
  // directly.
  checkKernel("conv2d backward filter",
              gradOf(filter,
                     [&](const Tensor &w) {
                       return F::conv2d(image, w, Tensor(), {2, 2}, {1, 1});
                     }),
              -1, "/*images*/ 2, /*transposed_gradient*/ true, /*open_blas*/ false");
  checkKernel("conv2d backward filter, 128 filters",
              gradOf(data({128, 3, 3, 3}, 9),
                     [&](const Tensor &w) {
                       return F::conv2d(image, w, Tensor(), {2, 2}, {1, 1});
                     }),
              -1, "/*images*/ 2, /*transposed_gradient*/ false, /*open_blas*/ false");
  // Grouped, strided and dilated: every index of the im2col kernels.
  Tensor grouped = data({6, 2, 3, 2}, 3), batch = data({2, 4, 7, 6}, 4);
  auto conv = [](const Tensor &x, const Tensor &w) {
    return F::conv2d(x, w, Tensor(), {2, 1}, {1, 1}, {1, 2}, 2);
  };
  checkKernel("conv2d grouped backward input",
              gradOf(batch, [&](const Tensor &x) { return conv(x, grouped); }));
  checkKernel("conv2d grouped backward filter",
              gradOf(grouped, [&](const Tensor &w) { return conv(batch, w); }));
  Tensor wide = data({1, 1, 1, 2}, 1), small = data({1, 1, 3, 3});
  auto padded = [](const Tensor &x, const Tensor &w) {
    return F::conv2d(x, w, Tensor(), {1, 1}, {0, 5}, {1, 12});
  };
  checkKernel("conv2d padded past the image backward input",
              gradOf(small, [&](const Tensor &x) { return padded(x, wide); }));
  checkKernel("conv2d padded past the image backward filter",
              gradOf(wide, [&](const Tensor &w) { return padded(small, w); }));
  // 16 images of 4x4 pixels share one product of 256 columns, and the input
  // gradient's (288 x 256 by 256 output channels, left matrix transposed) runs
  // in OpenBLAS where oneDNN runs AVX2 kernels (Note [Which library
  // multiplies]).
  Tensor deep = data({256, 32, 3, 3}, 7), tiles = data({16, 32, 4, 4}, 8);
  checkKernel("conv2d backward input, large product",
              gradOf(tiles,
                     [&](const Tensor &x) {
                       return F::conv2d(x, deep, Tensor(), {1, 1}, {1, 1});
                     }),
              -1,
              std::string("/*images*/ 16, /*transposed_gradient*/ false, /*open_blas*/ ") +
                  (codegen::oneDnnRunsAvx512() ? "false" : "true"));
  // Note [Images per product]: 100 pixels want 3 images per product; a batch
  // of 5 takes them one at a time, a batch of 6 three at a time.
  Tensor taps = data({6, 2, 3, 3}, 5);
  auto same = [](const Tensor &x, const Tensor &w) {
    return F::conv2d(x, w, Tensor(), {1, 1}, {1, 1}, {1, 1}, 2);
  };
  for (int64_t images : {5, 6}) {
    std::string chunk = images == 5 ? "/*images*/ 1," : "/*images*/ 3,",
                batch = std::to_string(images);
    Tensor x = data({images, 4, 10, 10}, 6);
    checkKernel("conv2d, batch " + batch, same(x, taps), -1, chunk);
    checkKernel("conv2d backward input, batch " + batch,
                gradOf(x, [&](const Tensor &in) { return same(in, taps); }), -1, chunk);
    checkKernel("conv2d backward filter, batch " + batch,
                gradOf(taps, [&](const Tensor &w) { return same(x, w); }), -1, chunk);
  }
  checkKernel("max_pool2d backward", gradOf(data({1, 2, 5, 5}), [](const Tensor &x) {
                return F::max_pool2d(x, {2, 2}, {1, 1});
              }));
  Tensor ids = from_vector<int64_t>({3, 0, 3, 1}, {4});
  checkKernel("scatter_add (embedding grad)",
              gradOf(data({5, 2}), [&](const Tensor &table) { return F::embedding(ids, table); }));
}

TEST(CpuKernel, IntegerRowSums) { checkKernel("integer row sums", (data({6, 7}) > 0).sum({1})); }

TEST(CpuKernel, IndependentPartsGetTheirOwnLoops) {
  // Two updates that share only a computed scalar (as AdamW's updates share
  // the bias correction) are one fusion, rendered as two loops
  // (Note [A loop per independent part]); parts that read the same large
  // input stay in one loop.
  Tensor scale = exp(data({1}, 7));
  Tensor x = data({64}), y = data({64}, 1);
  checkKernels("two independent updates", {x * scale + 1.0, y * scale - 2.0}, 2);
  checkKernels("two results of one input", {x * scale + 1.0, x * scale * 3.0}, 1);
}

TEST(CpuKernel, KernelsAreWrittenFromTheirPlansAlone) {
  // Every kind of value the renderer writes (a comparison, an iota, a
  // conversion, a select, a random op, a transpose, a slice, a broadcast,
  // constants, row and general reductions): each fusion's plan is taken,
  // the module and its context destroyed, and the kernels rendered from the
  // plans are the kernels rendered from the module (Note [Kernel plans]).
  const char *text = R"mlir(
    func.func @kinds(%x: tensor<6x8xf32>, %seed: tensor<i64>) -> (tensor<8x6xf32>, tensor<6xf32>,
        tensor<8xf32>, tensor<6x8xi32>, tensor<3x8xf32>) {
      %zero = sinter.constant dense<0.0> : tensor<6x8xf32>
      %positive = sinter.compare gt, %x, %zero : tensor<6x8xf32>
      %kept = sinter.select %positive, %x, %zero : tensor<6x8xi1>, tensor<6x8xf32>
      %noise = sinter.random normal, %seed, stream = 5 : tensor<6x8xf32>
      %sum = sinter.add %kept, %noise : tensor<6x8xf32>
      %t = sinter.transpose %sum, perm = [1, 0] : tensor<6x8xf32>
      %rows = sinter.reduce_max %x, dims = [1] : tensor<6x8xf32>
      %columns = sinter.reduce_sum %sum, dims = [0] : tensor<6x8xf32>
      %i = sinter.iota dim = 1 : tensor<6x8xi64>
      %n = sinter.convert %i : tensor<6x8xi64> -> tensor<6x8xi32>
      %s = sinter.slice %x, start = [1, 0], limit = [6, 8], step = [2, 1] : tensor<6x8xf32>
      return %t, %rows, %columns, %n, %s : tensor<8x6xf32>, tensor<6xf32>, tensor<8xf32>, tensor<6x8xi32>, tensor<3x8xf32>
    }
  )mlir";
  std::vector<codegen::KernelPlan> plans;
  std::string fromModule;
  {
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    ASSERT_NO_FATAL_FAILURE(parseAndFuse(text, context, module));
    module->walk([&](ir::FusionOp fusion) { plans.push_back(codegen::planCpuKernel(fusion)); });
    int64_t count = 0;
    mlir::FailureOr<std::string> source = codegen::renderCpuKernels(*module, "kernel", count);
    ASSERT_TRUE(mlir::succeeded(source));
    ASSERT_EQ(count, static_cast<int64_t>(plans.size()));
    fromModule = *source;
  }
  ASSERT_GE(plans.size(), 2u);
  std::string fromPlans = codegen::cpuKernelPrologue();
  for (size_t k = 0; k < plans.size(); ++k)
    ASSERT_FALSE(codegen::renderCpuKernel(plans[k], "kernel" + std::to_string(k), fromPlans));
  EXPECT_EQ(fromPlans, fromModule);
  for (const char *written : {" > ", "sinter_select<float>", "philoxNormal(seed, 5ULL",
                              "static_cast<int32_t>(", "1 + y0 * 2"})
    EXPECT_NE(fromPlans.find(written), std::string::npos) << "no " << written << " in\n"
                                                          << fromPlans;
}

TEST(CpuKernel, PlanningAsksThePlansTheKernelsWereWrittenFrom) {
  // A product's result dies in the fusion that reads it (and whose result
  // another product reads), so the fusion may be written over it (Note [In-place kernels]). Buffer
  // assignment asks the plan each fusion was rendered from (each fusion is planned once per
  // compile): a plan that allows no in-place write gets none.
  const char *text = R"mlir(
    func.func @f(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
      %h = sinter.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32>
      %m = sinter.reduce_max %h, dims = [1] : tensor<8x16xf32>
      %mb = sinter.broadcast_in_dim %m, dims = [0] : tensor<8xf32> -> tensor<8x16xf32>
      %d = sinter.sub %h, %mb : tensor<8x16xf32>
      %e = sinter.exp %d : tensor<8x16xf32>
      %y = sinter.matmul %e, %w : tensor<8x16xf32>, tensor<16x16xf32>
      return %y : tensor<8x16xf32>
    }
  )mlir";
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ASSERT_NO_FATAL_FAILURE(parseAndFuse(text, context, module));
  const codegen::Target &target = codegen::cpuTarget();
  mlir::FailureOr<codegen::RenderedKernels> kernels = target.render(*module);
  ASSERT_TRUE(mlir::succeeded(kernels));
  ASSERT_EQ(kernels->plans.size(), 3u);
  EXPECT_FALSE(kernels->plans[2]);
  EXPECT_FALSE(kernels->plans[0]) << "a matrix product has no kernel plan";
  ASSERT_TRUE(kernels->plans[1]);
  EXPECT_TRUE(kernels->plans[1]->writesInPlace(0, 0));
  auto function = *module->getOps<mlir::func::FuncOp>().begin();
  auto plan = [&](const codegen::RenderedKernels &rendered) {
    int kernel = 0;
    runtime::Program program;
    std::string report;
    EXPECT_TRUE(mlir::succeeded(
        compiler::planFunction(function, target, rendered, kernel, nullptr, program, report)));
    return report;
  };
  EXPECT_NE(plan(*kernels).find("in place"), std::string::npos) << plan(*kernels);
  kernels->plans[1]->inPlace.clear();
  EXPECT_EQ(plan(*kernels).find("in place"), std::string::npos) << plan(*kernels);
}

/// A plan written by hand, as another frontend would hand one over:
/// out0 = in0 * 2 + in1 over 32 elements, one loop.
codegen::KernelPlan scaleAndAddPlan() {
  codegen::KernelPlan plan;
  plan.choices = codegen::cpuPlanChoices();
  plan.kind = codegen::KernelPlan::Kind::Elementwise;
  plan.elements = 32;
  plan.parts = 1;
  plan.inputs = {{"f32", {4, 8}}, {"f32", {4, 8}}};
  using Storage = codegen::KernelPlan::Storage;
  auto value = [&](std::string op, std::vector<int> operands) {
    codegen::KernelPlan::Value v;
    v.op = std::move(op);
    v.dtype = "f32";
    v.shape = {4, 8};
    v.operands = std::move(operands);
    v.storage = Storage::Local;
    v.part = 0;
    return v;
  };
  codegen::KernelPlan::Value two = value("constant", {});
  two.splat = true;
  two.number = 2.0;
  plan.values = {two, value("mul", {-1, 0}), value("add", {1, -2})};
  plan.results = {{2, 0}};
  return plan;
}

TEST(CpuKernel, AHandWrittenPlanRendersAndRuns) {
  std::string source = codegen::cpuKernelPrologue();
  ASSERT_FALSE(codegen::renderCpuKernel(scaleAndAddPlan(), "kernel0", source));
  codegen::CompiledLibrary library;
  void *handle = nullptr;
  Kernel kernel = nullptr;
  ASSERT_NO_FATAL_FAILURE(loadKernel(source, library, handle, kernel));
  float x[32], y[32], out[32] = {};
  for (int i = 0; i < 32; ++i)
    x[i] = 0.25f * static_cast<float>(i), y[i] = static_cast<float>(i % 5) - 2.0f;
  const void *inputs[2] = {x, y};
  void *outputs[1] = {out};
  kernel(inputs, outputs);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(out[i], x[i] * 2.0f + y[i]) << "element " << i;
  dlclose(handle);
}

TEST(CpuKernel, ARendererProblemNamesTheValue) {
  using Kind = codegen::RenderProblem::Kind;
  std::string source;
  codegen::KernelPlan wideInput = scaleAndAddPlan();
  wideInput.inputs[1].dtype = "f64";
  std::optional<codegen::RenderProblem> problem =
      codegen::renderCpuKernel(wideInput, "kernel0", source);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->kind, Kind::UnsupportedType);
  EXPECT_EQ(problem->value, -2); // the second input
  codegen::KernelPlan unknownOp = scaleAndAddPlan();
  unknownOp.values[1].op = "frobnicate";
  problem = codegen::renderCpuKernel(unknownOp, "kernel0", source);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->kind, Kind::UnsupportedOp);
  EXPECT_EQ(problem->value, 1);
  codegen::KernelPlan wrongScratch = scaleAndAddPlan();
  wrongScratch.scratchBytes = {64};
  problem = codegen::renderCpuKernel(wrongScratch, "kernel0", source);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->kind, Kind::ScratchMismatch);
  // A plan made with another target's choices (Note [Plan choices]): the
  // CUDA target's, or lanes the pairwise combination cannot halve.
  codegen::KernelPlan forCuda = scaleAndAddPlan();
  forCuda.choices = codegen::cudaPlanChoices();
  codegen::KernelPlan threeLanes = scaleAndAddPlan();
  threeLanes.choices.lanes = 3;
  for (const codegen::KernelPlan &foreign : {forCuda, threeLanes}) {
    size_t before = source.size();
    problem = codegen::renderCpuKernel(foreign, "kernel0", source);
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->kind, Kind::ForeignChoices);
    EXPECT_NE(problem->detail.find(std::to_string(foreign.choices.lanes) + " lanes"),
              std::string::npos)
        << problem->detail;
    EXPECT_EQ(source.size(), before) << "nothing written";
  }
}

/// A Program of one matrix product X [4x16] W [16x8] from the kernel
/// library `library`: A (= W) and B (= X) arguments, C a result in the arena.
runtime::Program productProgram(const std::string &library, int64_t bytesOfX) {
  runtime::Program program;
  program.buffers = {{16 * 8 * 4}, {bytesOfX}, {4 * 8 * 4, 0}};
  program.arguments = {0, 1};
  program.results = {2};
  program.donors = {-1};
  program.inArena = {true};
  program.arenaBytes = 128;
  runtime::Program::Step launch;
  launch.kind = runtime::Program::Step::Kind::Gemm;
  launch.gemm = runtime::gemmOfRowMajor(false, false, 4, 8, 16, 1, false);
  launch.inputs = {0, 1};
  launch.outputs = {2};
  launch.results = 1;
  program.steps = {launch};
  program.library = library;
  return program;
}

std::string libraryOf(const std::string &source) {
  codegen::CompiledLibrary library;
  std::string error;
  EXPECT_TRUE(codegen::compileHostLibrary(source, library, error)) << error;
  return library.path;
}

/// A program of one launch: kernel 0 of `library` (named `<prefix>0`) reads
/// `inputs` and writes `output`, the step's one result; buffers with an
/// offset lie in an arena of `arenaBytes`.
runtime::Program oneKernelProgram(const std::string &library, const std::string &prefix,
                                  std::vector<runtime::Program::Buffer> buffers,
                                  std::vector<int> inputs, int output, int64_t arenaBytes) {
  runtime::Program program;
  program.inArena = {buffers[output].offset >= 0};
  program.buffers = std::move(buffers);
  program.results = {output};
  program.donors = {-1};
  program.arenaBytes = arenaBytes;
  program.kernelPrefix = prefix;
  runtime::Program::Step launch;
  launch.kernel = 0;
  launch.inputs = std::move(inputs);
  launch.outputs = {output};
  launch.results = 1;
  program.steps = {launch};
  program.library = library;
  return program;
}

TEST(CpuKernel, TheCpuExecutableRunsALibraryCallFromItsDescriptor) {
  // A library with no kernels (an eager matrix product's) still carries the
  // entry point for products.
  std::string library = libraryOf("#include \"cpu/kernel.h\"\n");
  auto executable = runtime::CpuExecutable::load(productProgram(library, 4 * 16 * 4));
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<float> w(16 * 8), x(4 * 16);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 5) * 0.5f;
  std::vector<void *> results(1, nullptr);
  ASSERT_TRUE((*executable)->run({w.data(), x.data()}, results).ok());
  const float *c = static_cast<const float *>(results[0]);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < 16; ++p)
        sum += double(x[i * 16 + p]) * w[p * 8 + j];
      EXPECT_EQ(c[i * 8 + j], static_cast<float>(sum)) << i << "," << j; // small integers: exact
    }
  runtime::HostAllocator::get().deallocate(results[0]);
}

TEST(CpuKernel, TheCpuExecutableRefusesALibraryCallItCannotRun) {
  std::string library = libraryOf("#include \"cpu/kernel.h\"\n");
  auto small = runtime::CpuExecutable::load(productProgram(library, 64));
  ASSERT_FALSE(small.ok());
  EXPECT_NE(
      small.status().message().find("reads 64 floats of B from buffer 1, which holds 64 bytes"),
      std::string::npos)
      << small.status();
  std::string without = libraryOf("extern \"C\" void nothing() {}\n");
  auto old = runtime::CpuExecutable::load(productProgram(without, 4 * 16 * 4));
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("has no sinter_gemm_v1 for the program's matrix products"),
            std::string::npos)
      << old.status();
}

TEST(CpuKernel, TheCpuExecutableRunsOnTheCoresNobodyElseWants) {
  // Note [Sharing the cores]: with other processes spinning on every core,
  // a run's kernels get a team of one; the caller's thread count is what
  // it was after the run.
  std::string library = libraryOf(R"(#include "cpu/kernel.h"
extern "C" void team_0(const void *const *, void *const *outputs) {
  int *seen = static_cast<int *>(outputs[0]);
  seen[0] = omp_get_max_threads();
#pragma omp parallel
  {
#pragma omp single
    seen[1] = omp_get_num_threads();
  }
}
)");
  auto executable =
      runtime::CpuExecutable::load(oneKernelProgram(library, "team_", {{64, -1}}, {}, 0, 0));
  ASSERT_TRUE(executable.ok()) << executable.status();
  void *openmp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(openmp, nullptr);
  auto threads = reinterpret_cast<int (*)()>(dlsym(openmp, "omp_get_max_threads"));
  auto setThreads = reinterpret_cast<void (*)(int)>(dlsym(openmp, "omp_set_num_threads"));
  int before = threads();
  setThreads(3); // whatever the machine has
  int cores = runtime::CoreShare::get().usable();
  test_support::Spinners spinners(cores);
  int seen[16] = {};
  std::vector<void *> results = {seen};
  for (int i = 0; i < 400 && !(seen[0] == 1 && seen[1] == 1); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE((*executable)->run({}, results).ok());
    EXPECT_EQ(threads(), 3);
  }
  EXPECT_EQ(seen[0], 1);
  EXPECT_EQ(seen[1], 1);
  setThreads(before);
  dlclose(openmp);
}

} // namespace

namespace {

TEST(CpuKernelDeathTest, AKernelThatReadsPastItsBufferIsReportedInAnAsanBuild) {
  // Note [Poisoned arenas]: in an AddressSanitizer build a kernel that reads
  // one float past its input, into arena bytes no buffer of its launch
  // owns, stops the process with ASan's report at that access.
  if (dlsym(RTLD_DEFAULT, "__asan_init") == nullptr)
    GTEST_SKIP() << "not an AddressSanitizer build (SINTER_SANITIZE=address,undefined "
                    "./tools/test.sh runs this)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string library = libraryOf(R"(
extern "C" void past_0(const void *const *inputs, void *const *outputs) {
  const float *in = static_cast<const float *>(inputs[0]);
  float *out = static_cast<float *>(outputs[0]);
  for (int i = 0; i < 16; ++i)
    out[i] = in[i + 1];
}
)");
  // A constant of 16 floats and the result, in an arena with 64 bytes
  // between them.
  runtime::Program program = oneKernelProgram(library, "past_", {{64, 0}, {64, 128}}, {0}, 1, 192);
  float one = 1.0f;
  runtime::Program::Step fill;
  fill.kind = runtime::Program::Step::Kind::Fill;
  fill.outputs = {0};
  fill.element.assign(reinterpret_cast<uint8_t *>(&one), reinterpret_cast<uint8_t *>(&one) + 4);
  program.steps.insert(program.steps.begin(), fill);
  auto executable = runtime::CpuExecutable::load(program);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<void *> results(1);
  EXPECT_DEATH((void)(*executable)->run({}, results), "use-after-poison");
}

} // namespace
