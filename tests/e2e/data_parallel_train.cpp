//===- data_parallel_train.cpp - one training run, three ways --------------===//
//
// An MLP trained with AdamW on fixed random data, each global batch of 2B
// rows, for the exactness tests of data parallelism (tests/e2e/launcher.py):
//
//   --mode ranks       under sinter-run with 2 workers: rank r trains on rows
//                      [rB, (r+1)B) of each global batch, its gradients
//                      averaged over the ranks in the step
//                      (sinter::distributed::reduce_gradients);
//   --mode accumulate  one process: the two micro-batches of B rows each, one
//                      backward each (gradients accumulate in order), then
//                      halved: what the ranks compute in the deterministic
//                      mode, to the bit;
//   --mode whole       one process, the 2B rows at once (the same gradient up
//                      to the order of the additions).
//
// --diverge (with --mode ranks): rank 1 builds a wider hidden layer, so the
// ranks record different steps (Note [The same step on every rank]).
// --zero (with --mode ranks): AdamW's state sharded over the ranks, the
// gradients reduced by the optimizer (Note [Sharded optimizer state]).
// --odd: 9 classes and a scalar temperature, so that some parameters do not
// split evenly over 2 ranks (and one has nothing on rank 1).
//
// Writes the parameters after the last step to --out (raw f32, in order) and
// prints each step's loss.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/sinter.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <string>

using namespace sinter;
namespace F = nn::functional;

int main(int argc, char **argv) {
  CLI::App app{"data-parallel exactness: one MLP run, three ways"};
  std::string mode = "ranks";
  int steps = 20;
  int64_t batch = 16;
  std::string out;
  bool diverge = false, zero = false, odd = false;
  app.add_flag("--diverge", diverge);
  app.add_flag("--zero", zero);
  app.add_flag("--odd", odd);
  app.add_option("--mode", mode)->check(CLI::IsMember({"ranks", "accumulate", "whole"}));
  app.add_option("--steps", steps);
  app.add_option("--batch", batch);
  app.add_option("--out", out)->required();
  CLI11_PARSE(app, argc, argv);
  compiler::install();

  distributed::init_process_group();
  int rank = distributed::get_rank();
  int world = distributed::get_world_size();
  if (mode == "ranks" && world != 2) {
    std::fprintf(stderr, "--mode ranks needs 2 workers (sinter-run --nproc-per-node 2)\n");
    return 2;
  }

  const int64_t kIn = 32, kClasses = odd ? 9 : 10;
  const int64_t kHidden = diverge && rank == 1 ? 65 : 64;
  manual_seed(7);
  nn::Linear first(kIn, kHidden), second(kHidden, kClasses);
  std::vector<Tensor> params = first.parameters();
  for (const Tensor &p : second.parameters())
    params.push_back(p);
  Tensor temperature = full({1}, 1.0);
  if (odd)
    params.push_back(temperature.requires_grad_());
  // The parameters computed before the first step, as a job's broadcast
  // does: a value computed inside two differently fused steps may differ
  // in its last bit, and the modes compare steps, not initializations.
  mark_step();
  optim::AdamW optimizer(params, {.lr = 1e-2, .shard_state = zero});
  auto loss = [&](const Tensor &x, const Tensor &y) {
    Tensor logits = second.forward(F::relu(first.forward(x)));
    return F::cross_entropy(odd ? logits * temperature : logits, y);
  };

  for (int step = 0; step < steps; ++step) {
    // The same global batch on every rank and mode.
    manual_seed(1000 + step);
    Tensor x = randn({2 * batch, kIn});
    Tensor y = (rand({2 * batch}) * double(kClasses)).to(DType::i64);
    optimizer.zero_grad();
    Tensor reported;
    if (mode == "ranks") {
      Tensor mine = x.slice(0, rank * batch, (rank + 1) * batch);
      Tensor labels = y.slice(0, rank * batch, (rank + 1) * batch);
      Tensor l = loss(mine, labels);
      l.backward();
      if (!zero)
        distributed::reduce_gradients(params);
      reported = l.detach();
      distributed::all_reduce(reported, distributed::ReduceOp::Mean);
    } else if (mode == "accumulate") {
      Tensor total;
      for (int64_t micro = 0; micro < 2; ++micro) {
        Tensor l = loss(x.slice(0, micro * batch, (micro + 1) * batch),
                        y.slice(0, micro * batch, (micro + 1) * batch));
        l.backward();
        total = micro == 0 ? l.detach() : total + l.detach();
      }
      {
        NoGradGuard noGrad;
        for (const Tensor &p : params)
          p.set_grad(p.grad() / 2.0);
      }
      reported = total / 2.0;
    } else {
      Tensor l = loss(x, y);
      l.backward();
      reported = l.detach();
    }
    optimizer.step();
    mark_step();
    std::printf("step %d loss %.9g\n", step, reported.item<float>());
  }

  if (rank == 0 || mode != "ranks") {
    std::ofstream file(out, std::ios::binary);
    for (const Tensor &p : params) {
      std::vector<float> values = p.to_vector<float>();
      file.write(reinterpret_cast<const char *>(values.data()),
                 static_cast<std::streamsize>(values.size() * sizeof(float)));
    }
  }
  if (mode == "ranks") {
    // Every rank holds the same parameters: rank 1 checks against rank 0's.
    for (const Tensor &p : params) {
      std::vector<float> mine = p.to_vector<float>();
      Tensor fromZero = from_vector(mine, p.shape());
      distributed::broadcast({fromZero}, 0);
      if (fromZero.to_vector<float>() != mine) {
        std::fprintf(stderr, "rank %d: parameters differ from rank 0's\n", rank);
        return 1;
      }
    }
  }
  std::printf("rank %d of %d: done\n", rank, world);
  return 0;
}
