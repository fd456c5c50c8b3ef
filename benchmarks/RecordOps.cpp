//===- RecordOps.cpp - the cost of recording an op on a lazy tensor -------===//
//
// Design decision 2 requires recording an op to cost well under a
// microsecond: a training step records thousands of ops every step, and the
// executable cache only pays off if recording is cheap. These benchmarks
// record ops without running them (nothing is evaluated).
//
//   ./build/benchmarks/bench_record_ops
//
//===----------------------------------------------------------------------===//
#include "sinter/sinter.h"

#include <benchmark/benchmark.h>

namespace {

using namespace sinter;

/// One elementwise op on same-shaped tensors: one node.
void BM_RecordAdd(benchmark::State &state) {
  Tensor a = zeros({256, 256}), b = ones({256, 256});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordAdd);

/// A broadcasting op: the broadcast and the add, two nodes.
void BM_RecordBroadcastAdd(benchmark::State &state) {
  Tensor a = zeros({256, 256}), bias = ones({256});
  for (auto _ : state) {
    Tensor c = a + bias;
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_RecordBroadcastAdd);

/// A matmul with autograd on: the node and its gradient function.
void BM_RecordMatmulWithGrad(benchmark::State &state) {
  Tensor x = zeros({64, 256});
  Tensor w = zeros({256, 256}).requires_grad_();
  for (auto _ : state) {
    Tensor y = matmul(x, w);
    benchmark::DoNotOptimize(y);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordMatmulWithGrad);

/// A whole GPT-mini training step (batch 8, context 128), forward, loss and
/// backward, recorded but not run.
void BM_RecordGPTMiniStep(benchmark::State &state) {
  manual_seed(0);
  models::GPT gpt(models::GPTConfig::named("gpt-mini"));
  Tensor ids = zeros({8, 128}, DType::i64);
  for (auto _ : state) {
    Tensor logits = gpt(ids);
    Tensor loss =
        nn::functional::cross_entropy(logits.reshape({8 * 128, 4096}), ids.reshape({8 * 128}));
    loss.backward();
    gpt.zero_grad();
    benchmark::DoNotOptimize(loss);
  }
}
BENCHMARK(BM_RecordGPTMiniStep)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
