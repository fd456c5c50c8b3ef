//===- sinter-train-example.cpp - train a classifier on Fashion-MNIST -----===//
//
// A complete training program written against Sinter's C++ API, as a user
// would write one: load Debian's Fashion-MNIST, shuffle with a seed, train an
// MLP or LeNet with AdamW, one mark_step() per step, and report the test
// accuracy. Steps run compiled (--mode compiled: fused C++ kernels, compiled
// once per graph structure), eagerly (--mode eager: one kernel per op), or on
// the reference executor (--mode reference).
// `--min-accuracy` makes it a test (exit 1 below the threshold). Run by
// `sinter-compile --program`, it exports its step ahead of time instead.
//
//===----------------------------------------------------------------------===//
#include "ToolMain.h"

#include "sinter/Compiler/StepCompiler.h"
#include "sinter/sinter.h"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>

namespace {

using namespace sinter;
namespace F = nn::functional;
using Clock = std::chrono::steady_clock;

/// The command line: one field per flag (their help in main()).
struct Options {
  std::string model = "mlp";
  int64_t epochs = 1;
  int64_t steps = 0;
  int64_t batchSize = 64;
  double lr = 2e-3;
  int64_t seed = 0;
  int64_t evalLimit = 0;
  int64_t logEvery = 100;
  double minAccuracy = 0;
  std::string mode = "compiled";
  std::string device;
  std::string dataDir = data::kFashionMnistDir;
};

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::shared_ptr<nn::Module> makeModel(const std::string &name) {
  if (name == "mlp")
    return models::mlp({.in_features = 784, .hidden = {256}, .num_classes = 10});
  if (name == "lenet")
    return models::lenet(1, 10);
  throwError("unknown --model '" + name + "'; expected mlp or lenet", Loc::current());
}

Tensor inputsFor(const std::string &model, const Tensor &images) {
  return model == "mlp" ? images.reshape({images.shape()[0], 784}) : images;
}

double evaluate(nn::Module &model, const std::string &name, const data::ImageDataset &test,
                int64_t limit) {
  NoGradGuard noGrad;
  model.eval();
  int64_t n = limit > 0 ? std::min(limit, test.size()) : test.size(), correct = 0;
  // Batches are picked with index tensors (data), not slices, so that every
  // evaluation batch records the same graph structure and is compiled once.
  constexpr int64_t kBatch = 500;
  for (int64_t start = 0; start < n; start += kBatch) {
    int64_t size = std::min(n - start, kBatch);
    std::vector<int64_t> ids(static_cast<size_t>(size));
    std::iota(ids.begin(), ids.end(), start);
    Tensor batch = from_vector(ids, {size});
    Tensor logits = model(inputsFor(name, index_select(test.images, 0, batch)));
    Tensor hits = (logits.argmax(1) == index_select(test.labels, 0, batch)).sum();
    correct += hits.item<int64_t>();
    mark_step();
  }
  model.train();
  return static_cast<double>(correct) / static_cast<double>(n);
}

int run(const Options &flags) {
  const std::string &name = flags.model, &mode = flags.mode;
  const int64_t batch = flags.batchSize, epochs = flags.epochs;
  SINTER_CHECK(batch > 0 && epochs > 0 && flags.steps >= 0, Loc::current(),
               "--batch-size and --epochs must be positive and --steps >= 0");
  SINTER_CHECK(mode == "compiled" || mode == "eager" || mode == "reference", Loc::current(),
               "--mode must be compiled, eager or reference, got '" + mode + "'");
  compiler::install();
  // The program's session: SINTER_DEBUG and the rest from the environment,
  // the mode from the flag.
  Settings settings = Settings::fromEnvironment();
  settings.compiler.enabled = mode == "compiled";
  settings.compiler.use_reference = mode == "reference";
  // A step that cannot be compiled stops the run (Note [Fallbacks are
  // said]): a compiled run is compiled.
  settings.compiler.allow_fallback = false;
  if (!flags.device.empty())
    settings.device = Device::parse(flags.device);
  Session::Use session(settings);
  Clock::time_point start = Clock::now();
  data::ImageDataset train = data::load_fashion_mnist("train", flags.dataDir);
  data::ImageDataset test = data::load_fashion_mnist("test", flags.dataDir);
  std::printf("Fashion-MNIST: %lld training and %lld test images (loaded in %.1f s)\n",
              static_cast<long long>(train.size()), static_cast<long long>(test.size()),
              seconds(start));

  manual_seed(static_cast<uint64_t>(flags.seed));
  std::shared_ptr<nn::Module> model = makeModel(name);
  int64_t parameters = 0;
  for (const Tensor &p : model->parameters())
    parameters += p.numel();
  int64_t perEpoch = train.size() / batch; // drop the last partial batch: shapes never change
  int64_t total = perEpoch * epochs;
  if (flags.steps > 0)
    total = std::min(total, flags.steps);
  std::printf("model %s: %lld parameters; %lld steps of batch %lld on %s (%s)\n", name.c_str(),
              static_cast<long long>(parameters), static_cast<long long>(total),
              static_cast<long long>(batch), session.session().device().toString().c_str(),
              mode.c_str());

  optim::AdamW optimizer(model->parameters(), {.lr = flags.lr, .weight_decay = 1e-4});
  optim::WarmupCosine schedule(optimizer, std::min<int64_t>(50, total / 10 + 1), total + 1,
                               flags.lr * 0.05);
  if (std::optional<aot::ArtifactRequest> request = aot::requested_artifact()) {
    // sinter-compile --program: this step, ahead of time (Note [A training
    // program, ahead of time]), on a batch of the shapes every step has.
    std::vector<int64_t> first(static_cast<size_t>(batch));
    std::iota(first.begin(), first.end(), 0);
    Tensor index = from_vector(first, {batch});
    Tensor input = inputsFor(name, index_select(train.images, 0, index));
    Tensor target = index_select(train.labels, 0, index);
    mark_step(); // the batch is data
    aot::write_artifact(
        request->dir,
        aot::training_artifact({.model = model.get(),
                                .optimizer = &optimizer,
                                .schedule = schedule.schedule(),
                                .batch = {{"input", input}, {"target", target}},
                                .loss = [&] { return F::cross_entropy((*model)(input), target); },
                                .predict_inputs = {{"input", input}},
                                .predict = [&] { return (*model)(input); },
                                .seed = static_cast<uint64_t>(flags.seed),
                                .model_name = name},
                               *request));
    std::printf("exported %s's training step and prediction (batch %lld) to %s\n", name.c_str(),
                static_cast<long long>(batch), request->dir.c_str());
    return 0;
  }
  std::mt19937_64 shuffler(static_cast<uint64_t>(flags.seed));
  std::vector<int64_t> order(train.size());
  Clock::time_point trainStart = Clock::now();
  double recentLoss = 0;
  int64_t recentCount = 0;
  for (int64_t step = 0; step < total; ++step) {
    int64_t within = step % perEpoch;
    if (within == 0) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), shuffler);
    }
    std::vector<int64_t> ids(order.begin() + within * batch, order.begin() + (within + 1) * batch);
    Tensor index = from_vector(ids, {batch});
    Tensor images = index_select(train.images, 0, index);
    Tensor labels = index_select(train.labels, 0, index);

    optimizer.zero_grad();
    Tensor loss = F::cross_entropy((*model)(inputsFor(name, images)), labels);
    loss.backward();
    optimizer.step();
    optimizer.zero_grad(); // before mark_step: the step returns no gradients
    schedule.step();
    mark_step();

    recentLoss += loss.item<double>();
    ++recentCount;
    if ((step + 1) % flags.logEvery == 0 || step + 1 == total) {
      double elapsed = seconds(trainStart);
      std::printf("step %6lld/%lld  loss %.4f  lr %.2e  %.0f samples/s\n",
                  static_cast<long long>(step + 1), static_cast<long long>(total),
                  recentLoss / recentCount, optimizer.lr(),
                  static_cast<double>((step + 1) * batch) / elapsed);
      std::fflush(stdout);
      recentLoss = 0;
      recentCount = 0;
    }
  }
  double trainSeconds = seconds(trainStart);
  double accuracy = evaluate(*model, name, test, flags.evalLimit);
  std::printf("trained %lld steps in %.1f s (%.1f ms/step); test accuracy %.2f%%\n",
              static_cast<long long>(total), trainSeconds, 1000 * trainSeconds / total,
              100 * accuracy);
  if (mode != "reference")
    std::printf("%s", metrics_report().c_str());
  // Every step (the training steps and the evaluation's) ran in the mode asked for.
  Metrics m = metrics();
  int64_t inMode = mode == "compiled" ? m.compiled_steps : mode == "eager" ? m.eager_steps : 0;
  int64_t expected = mode == "reference" ? 0 : m.steps;
  if (m.steps < total || inMode != expected || m.compiled_steps + m.eager_steps != expected ||
      m.fallbacks != 0) {
    std::fprintf(stderr,
                 "%lld of %lld steps ran %s (%lld compiled, %lld eager, %lld fallbacks); "
                 "expected all of at least %lld\n",
                 static_cast<long long>(inMode), static_cast<long long>(m.steps), mode.c_str(),
                 static_cast<long long>(m.compiled_steps), static_cast<long long>(m.eager_steps),
                 static_cast<long long>(m.fallbacks), static_cast<long long>(total));
    return 1;
  }
  double required = flags.minAccuracy;
  if (accuracy < required) {
    std::fprintf(stderr, "test accuracy %.2f%% is below --min-accuracy %.2f%%\n", 100 * accuracy,
                 100 * required);
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // The reference executor allocates a fresh buffer for every op's result.
  // Keeping freed memory in the process, instead of returning it to the
  // kernel and faulting it back in on the next step, halves the step time.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{"Trains an MLP or LeNet on Fashion-MNIST with Sinter's C++ API.",
               "sinter-train-example"};
  // As the Abseil flags these were: each also with underscores.
  sinter::tools::lastValueWinsAndDefaultsShown(app);
  Options flags;
  app.add_option("--model", flags.model, "mlp (784-256-10) or lenet");
  app.add_option("--epochs", flags.epochs, "passes over the training set");
  app.add_option("--steps", flags.steps, "stop after this many steps (0: run every epoch)");
  app.add_option("--batch-size,--batch_size", flags.batchSize, "training batch size");
  app.add_option("--lr", flags.lr, "AdamW learning rate (warmup then cosine decay)");
  app.add_option("--seed", flags.seed, "seed of the initialisation and the shuffling");
  app.add_option("--eval-limit,--eval_limit", flags.evalLimit,
                 "evaluate on the first N test images (0: all 10000)");
  app.add_option("--log-every,--log_every", flags.logEvery, "print a progress line every N steps")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-accuracy,--min_accuracy", flags.minAccuracy,
                 "exit with status 1 if the test accuracy is below this");
  app.add_option("--mode", flags.mode,
                 "compiled (each step one fused program), eager (one program per op) or "
                 "reference (the reference executor)");
  app.add_option("--device", flags.device,
                 "where to train: cpu, cuda or cuda:N (empty: SINTER_DEVICE, else cpu)");
  app.add_option("--data-dir,--data_dir", flags.dataDir, "Fashion-MNIST IDX files");
  return sinter::tools::toolMain(app, argc, argv, [&] { return run(flags); });
}
