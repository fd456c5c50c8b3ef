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

def SinterSchedule : Pass<"sinter-schedule", "::mlir::func::FuncOp"> {
  let summary = "Order a function's kernels to lower its peak memory";
  let description = [{
    Reorders the top-level kernels (fusions and library calls) of a function,
    respecting their dependencies, by list scheduling: of the kernels whose
    inputs are ready, the one that frees the most bytes net of what it
    allocates runs next (Note [Scheduling for memory] in
    `sinter/Passes/MemoryPlanner.h`). The new order is kept only when its
    simulated peak (the bytes live at once, as the memory planner will count
    them) is lower than the current order's. Constants move to the front (the
    runtime fills each just before its first reader); a view (a top-level
    reshape) follows the value it views.
  }];
  let dependentDialects = ["::sinter::ir::SinterDialect"];
}

def SinterRematerialize : Pass<"sinter-rematerialize", "::mlir::func::FuncOp"> {
  let summary = "Recompute fusions' results after the peak instead of keeping them";
  let description = [{
    A fusion result that is live at the function's peak only because a later
    op reads it (a forward value the backward pass reads) is recomputed just
    before that op: the fusion is cloned there, with the producers of its
    inputs that are gone by then, up to 4 deep (Note [Rematerialization] in
    `passes/lib/Rematerialize.cpp`); each clone computes only what is read of
    it. A fusion's result may instead be computed by a new fusion from the
    fusion's other results, when only pointwise ops lie between them (a layer
    norm's output from its centered input and 1/sigma; Note [Recomputed from
    its siblings]). Each trade is simulated on the whole function and made
    only if it lowers the bytes live at the peak without raising the peak.
    Pointwise fusions, and results recomputed from their siblings, are always
    traded so; with `budget` (bytes of the arena: what is
    written and not returned) and the peak still over it, any fusion
    (reductions included) and matmuls in such chains, until the simulated peak
    is within the budget or nothing is left to trade; over a budget the trades
    are chosen two ways, each on a copy of the function (the largest saving
    first; the most bytes saved per extra operation first), starting both
    with and without the results recomputed from their siblings, and the way
    that fits with fewer extra operations is made (Note [Two ways to trade]).
    Other library calls are never recomputed, nor is a value smaller than `min-bytes`, nor anything
    whose recomputation would read an argument later than the step does (it
    could no longer be donated). With `explain`, each trade
    is a remark: the bytes it saves at the peak and its extra operations. The
    function gets `sinter.rematerialized = [count, operations]`.
  }];
  let dependentDialects = ["::sinter::ir::SinterDialect"];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "Bytes the arena (what kernels write that is not returned) should fit in "
           "(0: only pointwise trades)">,
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"65536",
           "Values smaller than this are kept (not worth a kernel launch)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Report every recomputation as a remark">,
  ];
}

def SinterMaterializeReturnedSlices
    : Pass<"sinter-materialize-returned-slices", "::mlir::func::FuncOp"> {
  let summary = "Copy a returned view that involves a slice into a buffer of its own";
  let description = [{
    A value a function returns gets a buffer of its own size, handed to the
    caller (Note [Results in the arena] in `sinter/runtime/Program.h`). A
    top-level `sinter.slice` is a view at an offset into its operand's buffer
    (a contiguous slice: `SliceFusionResultsOutside`), so a returned chain of
    views (reshapes and slices, at least one slice) down to a computed value
    becomes a fusion that reads that value and copies the view out; a chain of
    reshapes alone stays a view. The last pass of the pipeline, run after
    rematerialization so that no later pass splits the copy again.
    ```mlir
    %s = sinter.slice %x, start = [2], limit = [6], step = [1] : tensor<8xf32>
    return %s : tensor<4xf32>
    // becomes
    %c = sinter.fusion %x : (tensor<8xf32>) -> tensor<4xf32> {
    ^bb0(%in: tensor<8xf32>):
      %s = sinter.slice %in, ...
      sinter.yield %s : tensor<4xf32>
    }
    return %c : tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::sinter::ir::SinterDialect"];
}

#endif // SINTER_PASSES_PASSES_TD
