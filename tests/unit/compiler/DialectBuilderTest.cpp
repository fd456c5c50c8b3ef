//===- DialectBuilderTest.cpp - building sinter ops from C++ --------------===//
//
// The lowering from the lazy graph builds ops through these builders, which
// infer result types; a wrong graph must fail verification with a message
// that names the shapes, never build silently.
//
//===----------------------------------------------------------------------===//
#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace mlir;
using namespace sinter::ir;

class DialectBuilder : public ::testing::Test {
protected:
  DialectBuilder() : builder(&context) {
    context.loadDialect<SinterDialect, func::FuncDialect>();
    loc = FileLineColLoc::get(&context, "train.cpp", 12, 3);
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  /// A function with the given argument types; the builder inserts into it.
  func::FuncOp function(TypeRange args) {
    auto fn = builder.create<func::FuncOp>(loc, "step", builder.getFunctionType(args, {}));
    builder.setInsertionPointToStart(fn.addEntryBlock());
    return fn;
  }

  /// Verifies the module, returning the first diagnostic ("" when valid).
  std::string verifyMessage() {
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    return succeeded(verify(*module)) ? "" : message;
  }

  MLIRContext context;
  OpBuilder builder;
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module;
};

TEST_F(DialectBuilder, InfersResultTypes) {
  auto fn = function({f32({8, 128, 256}), f32({1024, 256}), f32({4, 8, 16})});
  Value x = fn.getArgument(0), w = fn.getArgument(1), y = fn.getArgument(2);

  auto matmul =
      builder.create<MatmulOp>(loc, x, w, /*transpose_lhs=*/false, /*transpose_rhs=*/true);
  EXPECT_EQ(matmul.getType(), f32({8, 128, 1024}));

  auto transpose = builder.create<TransposeOp>(loc, y, ArrayRef<int64_t>{2, 0, 1});
  EXPECT_EQ(transpose.getType(), f32({16, 4, 8}));

  auto sum = builder.create<ReduceSumOp>(loc, y, ArrayRef<int64_t>{0, 2}, /*keepdim=*/true);
  EXPECT_EQ(sum.getType(), f32({1, 8, 1}));
  auto max = builder.create<ReduceMaxOp>(loc, y, ArrayRef<int64_t>{1}, /*keepdim=*/false);
  EXPECT_EQ(max.getType(), f32({4, 16}));

  auto slice = builder.create<SliceOp>(loc, y, ArrayRef<int64_t>{0, 1, 0},
                                       ArrayRef<int64_t>{4, 8, 16}, ArrayRef<int64_t>{2, 3, 5});
  EXPECT_EQ(slice.getType(), f32({2, 3, 4}));

  auto compare = builder.create<CompareOp>(loc, ComparisonDirection::gt, y, y);
  EXPECT_EQ(compare.getType(), RankedTensorType::get({4, 8, 16}, builder.getI1Type()));

  auto argmax = builder.create<ArgMaxOp>(loc, y, /*dim=*/2, /*keepdim=*/false);
  EXPECT_EQ(argmax.getType(), RankedTensorType::get({4, 8}, builder.getI64Type()));

  builder.create<func::ReturnOp>(loc);
  EXPECT_EQ(verifyMessage(), "");
}

TEST_F(DialectBuilder, InfersConvAndPoolShapes) {
  auto fn = function({f32({8, 3, 32, 32}), f32({16, 3, 5, 5})});
  auto conv =
      builder.create<Conv2dOp>(loc, fn.getArgument(0), fn.getArgument(1), ArrayRef<int64_t>{2, 2},
                               ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1}, /*groups=*/1);
  // (32 + 2*2 - 5) / 2 + 1 = 16
  EXPECT_EQ(conv.getType(), f32({8, 16, 16, 16}));
  auto pool =
      builder.create<Pool2dOp>(loc, PoolKind::max, conv.getResult(), ArrayRef<int64_t>{3, 3},
                               ArrayRef<int64_t>{2, 2}, ArrayRef<int64_t>{1, 1});
  // (16 + 2*1 - 3) / 2 + 1 = 8
  EXPECT_EQ(pool.getType(), f32({8, 16, 8, 8}));
  builder.create<func::ReturnOp>(loc);
  EXPECT_EQ(verifyMessage(), "");
}

TEST_F(DialectBuilder, GatherAndScatterShapesAgree) {
  auto ids = RankedTensorType::get({8, 128}, builder.getI32Type());
  auto fn = function({f32({4096, 256}), ids});
  auto gather = builder.create<GatherOp>(loc, fn.getArgument(0), fn.getArgument(1), /*axis=*/0);
  EXPECT_EQ(gather.getType(), f32({8, 128, 256}));
  auto scatter = builder.create<ScatterAddOp>(loc, fn.getArgument(0).getType(), fn.getArgument(0),
                                              fn.getArgument(1), gather.getResult(), /*axis=*/0);
  EXPECT_EQ(scatter.getType(), f32({4096, 256}));
  builder.create<func::ReturnOp>(loc);
  EXPECT_EQ(verifyMessage(), "");
}

TEST_F(DialectBuilder, WrongGraphFailsVerificationAtItsLocation) {
  auto fn = function({f32({4, 8}), f32({4, 3})});
  // Built with an explicit (wrong) result type, as a buggy lowering might.
  builder.create<AddOp>(loc, f32({4, 8}), fn.getArgument(0), fn.getArgument(1));
  builder.create<func::ReturnOp>(loc);

  std::string message;
  std::string where;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    if (auto fileLoc = dyn_cast<FileLineColLoc>(diag.getLocation()))
      where = fileLoc.getFilename().str() + ":" + std::to_string(fileLoc.getLine());
    return success();
  });
  EXPECT_TRUE(failed(verify(*module)));
  EXPECT_EQ(message, "'sinter.add' op lhs has type 'tensor<4x8xf32>' but rhs has type "
                     "'tensor<4x3xf32>'; broadcast explicitly with sinter.broadcast_in_dim");
  EXPECT_EQ(where, "train.cpp:12");
}

TEST_F(DialectBuilder, InferenceFailureNamesTheShapes) {
  auto lhs = f32({4, 8}), rhs = f32({7, 4});
  SmallVector<Type> inferred;
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto fn = function({lhs, rhs});
  MatmulOp::Adaptor adaptor(fn.getArguments(), DictionaryAttr::get(&context));
  EXPECT_TRUE(failed(MatmulOp::inferReturnTypes(&context, loc, adaptor, inferred)));
  EXPECT_EQ(message, "'sinter.matmul' op lhs [4, 8] has 8 columns but rhs [7, 4] has 7 rows");
  EXPECT_TRUE(inferred.empty());
}

TEST_F(DialectBuilder, ConstantsMaterialiseFromFolds) {
  auto fn = function({});
  auto type = f32({2});
  auto a =
      builder.create<ConstantOp>(loc, DenseElementsAttr::get(type, ArrayRef<float>{1.5f, 2.0f}));
  auto b =
      builder.create<ConstantOp>(loc, DenseElementsAttr::get(type, ArrayRef<float>{0.5f, -2.0f}));
  auto add = builder.create<AddOp>(loc, type, a.getResult(), b.getResult());
  SmallVector<OpFoldResult> folded;
  ASSERT_TRUE(succeeded(add->fold(folded)));
  ASSERT_EQ(folded.size(), 1u);
  auto attr = dyn_cast<DenseElementsAttr>(dyn_cast<Attribute>(folded.front()));
  ASSERT_TRUE(attr);
  auto values = attr.getValues<float>();
  EXPECT_EQ(values[0], 2.0f);
  EXPECT_EQ(values[1], 0.0f);
  Operation *constant =
      fn->getDialect()->getContext()->getLoadedDialect<SinterDialect>()->materializeConstant(
          builder, attr, type, loc);
  ASSERT_NE(constant, nullptr);
  EXPECT_TRUE(isa<ConstantOp>(constant));
  builder.create<func::ReturnOp>(loc);
  EXPECT_EQ(verifyMessage(), "");
}

TEST_F(DialectBuilder, APrunedFusionReadsOnlyWhatItsResultsNeed) {
  // The rematerialization pass prunes its clones with the fusion's patterns
  // alone (no other op's): when a result goes, what computed it goes too,
  // and so do the inputs only that read.
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(R"mlir(
    func.func @step(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %f:2 = sinter.fusion %a, %b : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
        %n = sinter.neg %x : tensor<4xf32>
        %s = sinter.add %x, %y : tensor<4xf32>
        %t = sinter.tanh %s : tensor<4xf32>
        sinter.yield %n, %t : tensor<4xf32>, tensor<4xf32>
      }
      return %f#0 : tensor<4xf32>
    })mlir",
                                                             &context);
  ASSERT_TRUE(parsed);
  auto step = cast<func::FuncOp>(parsed->getBody()->front());
  SmallVector<Operation *> fusions;
  step.walk([&](FusionOp fusion) { fusions.push_back(fusion); });
  ASSERT_EQ(fusions.size(), 1u);
  RewritePatternSet patterns(&context);
  FusionOp::getCanonicalizationPatterns(patterns, &context);
  GreedyRewriteConfig config;
  config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
  (void)applyOpPatternsAndFold(fusions, FrozenRewritePatternSet(std::move(patterns)), config);
  FusionOp pruned;
  step.walk([&](FusionOp fusion) { pruned = fusion; });
  ASSERT_TRUE(pruned);
  EXPECT_EQ(pruned->getNumResults(), 1u);
  ASSERT_EQ(pruned.getInputs().size(), 1u);
  EXPECT_EQ(pruned.getInputs()[0], step.getArgument(0));
  int bodyOps = 0;
  pruned.getBody().front().walk([&](Operation *) { ++bodyOps; });
  EXPECT_EQ(bodyOps, 2); // the neg and the yield
  EXPECT_TRUE(succeeded(verify(*parsed)));
}

} // namespace
