//===- Passes.td - Sinter's IR-to-IR passes ---------------------*- tablegen -*-===//
#ifndef SINTER_PASSES_PASSES_TD
#define SINTER_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def SinterFusion : Pass<"sinter-fusion", "::mlir::func::FuncOp"> {
  let summary = "Group ops that will run as one kernel into sinter.fusion regions";
  let description = [{
    Groups elementwise ops, layout ops (broadcast_in_dim, reshape, transpose,
    slice) and row reductions (reduce_sum / reduce_max over trailing
    dimensions) that share one iteration domain into `sinter.fusion` regions:
    each region becomes one kernel, its intermediates never touch memory.
    A reduction over leading dims (a bias gradient) becomes a fusion of its
    own. Library ops (matmul, convolutions, pooling, gather, scatter_add,
    concat, argmax, all_reduce) stay outside, as calls. Splat constants are
    cloned into the regions that use them. A layout op reads its operand at
    remapped indices, so a cheap producer of another size (a bias negated,
    then broadcast) is fused and recomputed where it is read.

    Legality lives in FusionPolicy (pure functions returning a decision with a
    reason); with `explain`, every decision is reported as a remark at the
    op's (user's) location.

    ```mlir
    // softmax: max, exp, sum and divide become one kernel
    %y = sinter.fusion %x : (tensor<4x8xf32>) -> tensor<4x8xf32> { ... }
    ```
  }];
  let dependentDialects = ["::sinter::ir::SinterDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Report every fusion decision, with its reason, as a remark">,
  ];
}

#endif // SINTER_PASSES_PASSES_TD
