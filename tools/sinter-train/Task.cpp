//===- Task.cpp - what a zoo job trains: model, data, loss ----------------===//
#include "Task.h"

#include "JobOutput.h"

#include "sinter/runtime/CoreShare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace sinter::tools {
namespace {

namespace F = nn::functional;
namespace fs = std::filesystem;

/// The held-out loss of a model that predicts every token by its frequency
/// in the training tokens (add-one smoothed): what a language model must beat.
double unigramLoss(const std::vector<int32_t> &train, const std::vector<int32_t> &heldOut,
                   int64_t vocab) {
  std::vector<double> counts(static_cast<size_t>(vocab), 1.0);
  for (int32_t id : train)
    counts[static_cast<size_t>(id)] += 1;
  double total = static_cast<double>(train.size() + static_cast<size_t>(vocab)), loss = 0;
  for (int32_t id : heldOut)
    loss -= std::log(counts[static_cast<size_t>(id)] / total);
  return loss / static_cast<double>(heldOut.size());
}

} // namespace

std::shared_ptr<nn::Module> Task::makeModel() const {
  if (name == "mlp")
    return models::mlp({.in_features = 784, .hidden = {256}, .num_classes = 10});
  if (name == "lenet")
    return models::lenet(1, 10);
  if (name == "resnet18")
    return models::resnet18(10, 1);
  models::GPTConfig config = models::GPTConfig::named(name);
  config.vocab_size = vocab;
  config.context = context;
  config.dropout = dropout;
  return std::make_shared<models::GPT>(config);
}

Tensor Task::logits(nn::Module &model, const Tensor &inputs) const {
  Tensor x = name == "mlp" ? inputs.reshape({inputs.shape()[0], 784}) : inputs;
  Tensor out = model(x);
  return languageModel ? out.reshape({-1, vocab}) : out;
}

Tensor Task::loss(nn::Module &model, const data::Batch &batch) const {
  return F::cross_entropy(logits(model, batch.inputs), batch.targets.reshape({-1}));
}

Tensor Task::step(nn::Module &model, optim::Optimizer &optimizer,
                  const std::vector<data::Batch> &micro, double gradClip, bool sharded) const {
  optimizer.zero_grad();
  const auto K = static_cast<double>(micro.size());
  Tensor value;
  for (size_t i = 0; i < micro.size(); ++i) {
    if (i > 0)
      mark_step();
    Tensor one = loss(model, micro[i]);
    if (micro.size() > 1)
      one = one / K;
    one.backward();
    value = i == 0 ? one : value.detach() + one.detach();
  }
  bool ranks = distributed::get_world_size() > 1;
  if (ranks && !sharded)
    distributed::reduce_gradients(optimizer.params());
  if (gradClip > 0 && !sharded)
    optim::clip_grad_norm_(optimizer.params(), gradClip);
  optimizer.step();
  optimizer.zero_grad();
  if (!ranks)
    return value;
  Tensor reported = value.detach();
  distributed::all_reduce(reported, distributed::ReduceOp::Mean);
  return reported;
}

Tensor Task::step(nn::Module &model, optim::Optimizer &optimizer, const data::Batch &batch,
                  double gradClip) const {
  return step(model, optimizer, std::vector<data::Batch>{batch}, gradClip);
}

Task makeTask(const Job &job) {
  Task task;
  task.name = job.entry_point;
  task.languageModel = job.language_model;
  if (!job.language_model) {
    std::string dir = job.dataset == "fashion-mnist" ? data::kFashionMnistDir : job.dataset;
    task.train = data::fashion_mnist("train", dir);
    task.heldOut = data::fashion_mnist("test", dir);
    task.heldOutSplit = "test";
    task.dataNote = "Fashion-MNIST (" + dir + ")";
    return task;
  }
  models::GPTConfig config = models::GPTConfig::named(job.entry_point);
  task.context = job.context > 0 ? job.context : config.context;
  task.dropout = job.dropout;
  std::vector<int32_t> train, heldOut;
  auto split = [&](std::vector<int32_t> tokens) {
    // The last tenth is held out (at least one window and its next token).
    auto held = std::max<int64_t>(static_cast<int64_t>(tokens.size()) / 10, task.context + 1);
    if (static_cast<int64_t>(tokens.size()) < held + task.context + 1)
      throw JobError("dataset", "\"" + job.dataset + "\" has " + std::to_string(tokens.size()) +
                                    " tokens; a context of " + std::to_string(task.context) +
                                    " needs at least " + std::to_string(held + task.context + 1));
    heldOut.assign(tokens.end() - held, tokens.end());
    tokens.resize(tokens.size() - static_cast<size_t>(held));
    train = std::move(tokens);
  };
  if (fs::path(job.dataset).extension() == ".bin") {
    std::vector<int32_t> tokens = data::read_token_file(job.dataset);
    if (job.vocab_size_set) {
      // The vocabulary named in the job: an id past it is a file of another
      // tokenizer (or a corrupt one), not a larger model.
      auto past = std::find_if(tokens.begin(), tokens.end(),
                               [&](int32_t id) { return id >= job.vocab_size; });
      if (past != tokens.end())
        throw JobError(job.dataset, "token " + std::to_string(*past) + " (at position " +
                                        std::to_string(past - tokens.begin()) +
                                        ") is not below hyperparameters.vocab_size " +
                                        std::to_string(job.vocab_size));
    }
    split(std::move(tokens));
    task.vocab = job.vocab_size_set
                     ? job.vocab_size
                     : 1 + std::max(*std::max_element(train.begin(), train.end()),
                                    *std::max_element(heldOut.begin(), heldOut.end()));
    task.dataNote = "tokens of " + job.dataset +
                    (job.vocab_size_set ? std::string()
                                        : " (vocabulary: the largest id + 1; "
                                          "hyperparameters.vocab_size names it)");
  } else {
    std::string text = data::read_text(job.dataset);
    size_t cut = text.size() - std::max<size_t>(text.size() / 10, 1);
    std::unique_ptr<data::Tokenizer> tokenizer;
    if (job.tokenizer == "byte") {
      tokenizer = data::byte_tokenizer();
    } else if (job.tokenizer == "bpe") {
      Clock::time_point start = Clock::now();
      auto bpe = data::BpeTokenizer::train(std::string_view(text).substr(0, cut), job.vocab_size);
      bpe.save(job.output_dir + "/tokenizer");
      std::printf("trained a BPE vocabulary of %lld tokens in %.1f s (saved in %s/tokenizer)\n",
                  static_cast<long long>(bpe.vocab_size()), secondsSince(start),
                  job.output_dir.c_str());
      tokenizer = std::make_unique<data::BpeTokenizer>(std::move(bpe));
    } else { // a folder with GPT-2's files (checked by parseJob)
      tokenizer = std::make_unique<data::BpeTokenizer>(
          data::BpeTokenizer::load(job.tokenizer + "/encoder.json", job.tokenizer + "/vocab.bpe"));
    }
    std::vector<int32_t> all = tokenizer->encode(std::string_view(text).substr(0, cut));
    std::vector<int32_t> tail = tokenizer->encode(std::string_view(text).substr(cut));
    all.insert(all.end(), tail.begin(), tail.end());
    split(std::move(all)); // at least a window held out, whatever the text's length
    task.vocab = tokenizer->vocab_size();
    task.dataNote = std::to_string(text.size()) + " bytes of text from " + job.dataset + ", " +
                    job.tokenizer + " tokenizer";
  }
  task.unigramLoss = unigramLoss(train, heldOut, task.vocab);
  task.dataNote += ": " + std::to_string(train.size()) + " training and " +
                   std::to_string(heldOut.size()) + " held-out tokens, vocabulary " +
                   std::to_string(task.vocab);
  task.train = data::token_windows(std::move(train), task.context);
  task.heldOut = data::token_windows(std::move(heldOut), task.context);
  task.heldOutSplit = "val";
  return task;
}

Evaluation evaluate(const Task &task, nn::Module &model, int64_t batchSize, int64_t limit) {
  NoGradGuard noGrad;
  model.eval();
  data::DataLoader loader(
      task.heldOut, {.batch_size = batchSize, .shuffle = false, .drop_last = false, .prefetch = 2});
  int64_t batches = loader.batches_per_epoch();
  if (limit > 0)
    batches = std::min(batches, limit);
  const int64_t world = distributed::get_world_size(), rank = distributed::get_rank();
  const int64_t mine = (batches + world - 1) / world; // batches a rank, the last ones padded
  std::vector<double> sums(static_cast<size_t>(3 * mine), 0.0);
  for (int64_t b = 0; b < batches; ++b) {
    data::Batch batch = loader.next();
    if (b % world != rank)
      continue;
    Tensor logits = task.logits(model, batch.inputs);
    Tensor targets = batch.targets.reshape({-1});
    // Padding rows (mask 0) count for nothing.
    Tensor weights = task.languageModel
                         ? (batch.mask.unsqueeze(1) * ones({1, task.context})).reshape({-1})
                         : batch.mask;
    Tensor losses = F::cross_entropy(logits, targets, -100, F::Reduction::none) * weights;
    Tensor hits = (logits.argmax(1) == targets).to(DType::f32) * weights;
    Tensor three = stack({losses.sum(), hits.sum(), weights.sum()});
    mark_step();
    std::vector<double> values = three.to_vector<double>();
    std::copy(values.begin(), values.end(), sums.begin() + 3 * (b / world));
  }
  std::vector<double> all = sums;
  if (world > 1) {
    Tensor gathered = distributed::all_gather(from_vector<double>(sums, {3 * mine}));
    mark_step();
    all = gathered.to_vector<double>();
  }
  double lossSum = 0, correct = 0, counted = 0;
  for (int64_t b = 0; b < batches; ++b) {
    const double *three = all.data() + 3 * ((b % world) * mine + b / world);
    lossSum += three[0];
    correct += three[1];
    counted += three[2];
  }
  model.train();
  return {lossSum / counted, correct / counted, static_cast<int64_t>(counted)};
}

Throughput compareWithEager(const Task &task, int64_t batchSize, int64_t steps, uint64_t seed) {
  struct Run {
    Session session; // the job's, compiled or eager
    std::shared_ptr<nn::Module> model;
    std::unique_ptr<optim::AdamW> optimizer;
    std::unique_ptr<data::DataLoader> loader;
    std::vector<double> times;
  };
  std::vector<Run> runs;
  for (bool compiled : {true, false}) {
    manual_seed(seed);
    Settings settings = Session::current().settings();
    settings.compiler.enabled = compiled;
    Run run{Session(settings), task.makeModel(), nullptr, nullptr, {}};
    run.optimizer =
        std::make_unique<optim::AdamW>(run.model->parameters(), optim::AdamWOptions{.lr = 1e-3});
    run.loader = std::make_unique<data::DataLoader>(
        task.train, data::LoaderOptions{.batch_size = batchSize, .seed = seed});
    runs.push_back(std::move(run));
  }
  runtime::CoreShare &share = runtime::CoreShare::get();
  runtime::CoreShare::Tally before = share.tally();
  for (int64_t i = 0; i <= steps; ++i)
    for (Run &run : runs) {
      Session::Use use(run.session);
      data::Batch batch = run.loader->next();
      Clock::time_point start = Clock::now();
      Tensor loss = task.step(*run.model, *run.optimizer, batch);
      mark_step();
      loss.item<double>();
      if (i > 0)
        run.times.push_back(secondsSince(start));
    }
  auto median = [](std::vector<double> times) {
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  return {median(runs[0].times), median(runs[1].times), share.busyNote(before, share.tally())};
}

} // namespace sinter::tools
