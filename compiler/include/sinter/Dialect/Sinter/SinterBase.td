//===- SinterBase.td - the sinter dialect, its types and enums -*- tablegen -*-===//
//
// Tensors in the sinter dialect are builtin ranked tensors with static shapes
// (memory is planned ahead, so every size is known) over f32, f16, bf16, i32,
// i64 and i1. Elementwise ops take operands of identical type: broadcasting is
// explicit (sinter.broadcast_in_dim), as in XLA's HLO, so that every index map
// of a fused kernel can be read off the IR.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_DIALECT_SINTER_SINTERBASE_TD
#define SINTER_DIALECT_SINTER_SINTERBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Sinter_Dialect : Dialect {
  let name = "sinter";
  let cppNamespace = "::sinter::ir";
  let summary = "Whole training steps as tensor programs, before fusion and after";
  let description = [{
    The `sinter` dialect holds a training step recorded by Sinter's lazy-tensor
    API: forward, loss, backward, optimizer update and gradient all-reduce, as
    one function over statically shaped tensors. Passes decompose composite ops,
    group ops into `sinter.fusion` regions (each becomes one kernel), and plan
    memory; codegen turns each region into CUDA C++ or C++.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Sinter_Tensor : StaticShapeTensorOf<[F32, F16, BF16, I32, I64, I1]>;
def Sinter_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16]>;
def Sinter_NumericTensor : StaticShapeTensorOf<[F32, F16, BF16, I32, I64]>;
def Sinter_IntegerTensor : StaticShapeTensorOf<[I32, I64]>;
def Sinter_LogicalTensor : StaticShapeTensorOf<[I1, I32, I64]>;
def Sinter_BoolTensor : StaticShapeTensorOf<[I1]>;
def Sinter_SeedTensor : 0DTensorOf<[I64]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getIntegerType(64))";
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

class Sinter_EnumAttr<I32EnumAttr enumInfo, string name>
    : EnumAttr<Sinter_Dialect, enumInfo, name> {
  let assemblyFormat = "$value";
}

def Sinter_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "how sinter.compare compares its operands", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::sinter::ir";
}
def Sinter_ComparisonDirectionAttr
    : Sinter_EnumAttr<Sinter_ComparisonDirection, "comparison_direction">;

def Sinter_RandomDistribution : I32EnumAttr<"RandomDistribution",
    "the distribution sinter.random draws from", [
      I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"normal", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::sinter::ir";
}
def Sinter_RandomDistributionAttr
    : Sinter_EnumAttr<Sinter_RandomDistribution, "random_distribution">;

def Sinter_PoolKind : I32EnumAttr<"PoolKind", "the reduction of a pooling window", [
      I32EnumAttrCase<"max", 0>, I32EnumAttrCase<"avg", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::sinter::ir";
}
def Sinter_PoolKindAttr : Sinter_EnumAttr<Sinter_PoolKind, "pool_kind">;

def Sinter_ReductionKind : I32EnumAttr<"ReductionKind",
    "how sinter.all_reduce combines the ranks' values", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::sinter::ir";
}
def Sinter_ReductionKindAttr : Sinter_EnumAttr<Sinter_ReductionKind, "reduction_kind">;

#endif // SINTER_DIALECT_SINTER_SINTERBASE_TD
