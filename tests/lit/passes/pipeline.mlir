// RUN: sinter-opt %s --sinter-pipeline | FileCheck %s
// RUN: sinter-opt %s --pass-pipeline='builtin.module(sinter-pipeline{budget=1048576})' \
// RUN:   --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASSES

// The whole pipeline that compiles a step (sinter/Passes/PassPipeline.h), as
// the compiler runs it, in order, with the budget handed to
// rematerialization and the returned slices materialized last.
// PASSES: Pass Manager with 8 passes:
// PASSES-NEXT: builtin.module(canonicalize{{.*}},cse,func.func(sinter-fusion{explain=false}),canonicalize{{.*}},func.func(sinter-schedule),func.func(sinter-rematerialize{budget=1048576 explain=false min-bytes=65536}),canonicalize{{.*}},func.func(sinter-materialize-returned-slices))

// Softmax as written (two reductions, their broadcasts, the arithmetic)
// becomes one kernel.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[F:.*]] = sinter.fusion %arg0 : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK: sinter.reduce_max
// CHECK: sinter.exp
// CHECK: sinter.reduce_sum
// CHECK: sinter.div
// CHECK: sinter.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sinter.reduce_max %x, dims = [1] : tensor<4x8xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = sinter.sub %x, %mb : tensor<4x8xf32>
  %e = sinter.exp %d : tensor<4x8xf32>
  %s = sinter.reduce_sum %e, dims = [1] : tensor<4x8xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = sinter.div %e, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
