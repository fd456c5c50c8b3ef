//===- Train.cpp - running a training job ---------------------------------===//
//
// A job's life: configure the compiler, read the data, build the model (or
// launch the user's program), pick the batch size and learning rate, train
// with a progress line, evaluate on the held-out split, write metrics,
// checkpoints and a loss curve into output_dir, and summarise.
//
//===----------------------------------------------------------------------===//
#include "Train.h"

#include "Checkpoint.h"
#include "DataParallel.h"

#include "LargestBatch.h"
#include "ZooTask.h"

#include "sinter/Compiler/StepCompiler.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/ByteCount.h"
#include "sinter/runtime/CoreShare.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Files.h"
#include "sinter/runtime/StepSession.h"
#include "sinter/runtime/World.h"
#include "sinter/sinter.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

namespace sinter::tools {
namespace {

namespace F = nn::functional;
namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

std::string clockTime(double seconds) {
  auto s = static_cast<int64_t>(std::lround(seconds));
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(s / 60),
                static_cast<long long>(s % 60));
  return text;
}

//===----------------------------------------------------------------------===//
// What the job trains
//===----------------------------------------------------------------------===//

/// The model, its data and its loss.
struct Task {
  std::string name;
  bool languageModel = false;
  std::shared_ptr<const data::Dataset> train, heldOut;
  std::string heldOutSplit; ///< "test" or "val"
  int64_t vocab = 0, context = 0;
  double dropout = 0;
  double unigramLoss = 0; ///< language models: the held-out loss of token frequencies alone
  std::string dataNote;

  std::shared_ptr<nn::Module> makeModel() const {
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
  Tensor logits(nn::Module &model, const Tensor &inputs) const {
    Tensor x = name == "mlp" ? inputs.reshape({inputs.shape()[0], 784}) : inputs;
    Tensor out = model(x);
    return languageModel ? out.reshape({-1, vocab}) : out;
  }
  Tensor loss(nn::Module &model, const data::Batch &batch) const {
    return F::cross_entropy(logits(model, batch.inputs), batch.targets.reshape({-1}));
  }
  /// Records one training step on `micro` (forward, loss, backward of each
  /// micro-batch, the gradients clipped to `gradClip` when positive, the
  /// optimizer's update) and returns its loss; it runs at the next
  /// mark_step (or is planned). Several micro-batches accumulate their
  /// gradients, each loss scaled by 1/K so that the gradient is the mean
  /// over the K micro-batches as over one batch of them all; every
  /// micro-batch but the last is its own step (mark_step), so a step holds
  /// the activations of one micro-batch, and only the last one reduces over
  /// the ranks and updates (Note [Data-parallel jobs]).
  /// The gradients are cleared after the update, so the compiled step
  /// returns none and frees each once its parameter is updated.
  /// In a world of several ranks the gradients are averaged over them
  /// before clipping (by the optimizer itself when its state is sharded:
  /// `sharded`, which then clips too), and so is the loss returned.
  Tensor step(nn::Module &model, optim::Optimizer &optimizer, const std::vector<data::Batch> &micro,
              double gradClip = 0, bool sharded = false) const {
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
  Tensor step(nn::Module &model, optim::Optimizer &optimizer, const data::Batch &batch,
              double gradClip = 0) const {
    return step(model, optimizer, std::vector<data::Batch>{batch}, gradClip);
  }
};

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

//===----------------------------------------------------------------------===//
// Output files
//===----------------------------------------------------------------------===//

/// Creates `dir` and its parents, or throws JobError(key) saying why not.
void createFolder(const std::string &dir, const std::string &key) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir, error))
    throw JobError(key, "cannot create the folder " + dir + ": " +
                            (error ? error.message() : "a file of that name is in the way"));
}

/// metrics.jsonl: one JSON object per line, flushed as written; none at an
/// empty path (the ranks other than 0 of a data-parallel job).
class MetricsLog {
public:
  MetricsLog(const std::string &path, int64_t keepUpTo) : path_(path) {
    if (path.empty())
      return;
    // A resumed job keeps the rows up to its checkpoint's step (a row torn
    // by a crash does not parse and goes), written anew atomically: a job
    // killed now still leaves them.
    std::string kept;
    if (keepUpTo > 0) {
      std::ifstream in(path, std::ios::binary);
      kept = keptMetricsRows(std::string(std::istreambuf_iterator<char>(in), {}), keepUpTo);
    }
    try {
      io::write_file_atomically(path, {kept}, "metrics log");
    } catch (const sinter::Error &error) {
      throw JobError("output_dir", std::string("cannot write ") + path + ": " + error.message());
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0)
      throw JobError("output_dir", "cannot write " + path + ": " + std::strerror(errno));
  }
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;
  ~MetricsLog() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  /// Appends the row in one write (a crash leaves whole rows and at most
  /// one torn last row, which a resume drops).
  void write(const json &row) {
    if (path_.empty())
      return;
    if (Status written = runtime::writeAll(fd_, row.dump() + "\n", "metrics log", path_);
        !written.ok())
      throw JobError("output_dir", std::string(written.message()));
  }
  /// The rows so far on disk: before a checkpoint, which a resume trusts
  /// them to agree with.
  void sync() {
    if (fd_ >= 0 && ::fsync(fd_) != 0)
      throw JobError(path_, std::string("flushing the metrics failed: ") + std::strerror(errno));
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  int fd_ = -1;
};

/// `text` as a gnuplot single-quoted string (a quote doubled).
std::string gnuplotQuoted(const std::string &text) {
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

/// Draws the loss curve with gnuplot (Debian's gnuplot-nox), run without a
/// shell in `dir` (so that no character of the folder's name can reach a
/// command line); returns the PNG's path, or an empty string (with the
/// reason printed) without it.
std::string plotLoss(const std::string &dir, const std::string &metrics, const std::string &split) {
  std::ifstream in(metrics);
  const std::string heldName = "loss_" + split + ".tsv";
  std::ofstream train(dir + "/loss_train.tsv"), held(dir + "/" + heldName);
  for (std::string line; std::getline(in, line);) {
    json row = json::parse(line, nullptr, false);
    if (!row.is_object() || !row.contains("loss") || !row["loss"].is_number() ||
        !row.contains("step") || !row["step"].is_number_integer() || !row.contains("split"))
      continue;
    (row["split"] == "train" ? train : held)
        << row["step"].get<int64_t>() << "\t" << row["loss"].get<double>() << "\n";
  }
  train.close();
  held.close();
  std::string script = dir + "/loss.gnuplot", png = dir + "/loss.png";
  std::ofstream(script) << "set terminal pngcairo size 900,500\n"
                        << "set output 'loss.png'\n"
                        << "set xlabel 'step'\nset ylabel 'loss'\nset grid\nset key top right\n"
                        << "plot 'loss_train.tsv' using 1:2 with lines lw 1 title 'train', "
                        << gnuplotQuoted(heldName) << " using 1:2 with linespoints lw 2 pt 7 title "
                        << gnuplotQuoted(split) << "\n";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::string program = "gnuplot", argument = "loss.gnuplot";
  char *argv[] = {program.data(), argument.data(), nullptr};
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT) {
    std::printf("loss curve: gnuplot is not installed (apt-get install gnuplot-nox); the data is "
                "in %s/loss_*.tsv\n",
                dir.c_str());
    return "";
  }
  int status = 0;
  bool ran = spawned == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
  if (!ran || !fs::exists(png)) {
    std::printf("loss curve: gnuplot failed on %s\n", script.c_str());
    return "";
  }
  return png;
}

//===----------------------------------------------------------------------===//
// Evaluation and the progress line
//===----------------------------------------------------------------------===//

struct Evaluation {
  double loss = 0, accuracy = 0;
  int64_t examples = 0;
};

/// The held-out loss and accuracy. In a world of several ranks, rank r
/// evaluates batches r, r + world, ... and the ranks gather every batch's
/// sums, which each adds in batch order: what every rank logs equals, to
/// the bit, what one process evaluating them all logs.
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

/// One line that redraws itself on a terminal; plain lines in a log.
class Progress {
public:
  Progress(int64_t total, int64_t every) : total_(total), every_(every), tty_(isatty(1) != 0) {}
  void update(int64_t step, int64_t epoch, double loss, double lr, double samplesPerSecond,
              double eta) {
    bool due = step % every_ == 0 || step == total_;
    double now = secondsSince(start_);
    if (!(due || (tty_ && now - drawn_ > 0.1)))
      return;
    drawn_ = now;
    char line[200];
    std::snprintf(
        line, sizeof line, "step %lld/%lld  epoch %lld  loss %.4f  lr %.2e  %.0f samples/s  ETA %s",
        static_cast<long long>(step), static_cast<long long>(total_),
        static_cast<long long>(epoch + 1), loss, lr, samplesPerSecond, clockTime(eta).c_str());
    if (tty_)
      std::printf("\r\033[K%s%s", line, due ? "\n" : "");
    else
      std::printf("%s\n", line);
    std::fflush(stdout);
  }

private:
  int64_t total_, every_;
  bool tty_;
  Clock::time_point start_ = Clock::now();
  double drawn_ = -1;
};

//===----------------------------------------------------------------------===//
// A user's program
//===----------------------------------------------------------------------===//

/// Runs the user's training program with the job in its environment
/// (SINTER_JOB: the resolved job as JSON; SINTER_HYPERPARAMETERS;
/// SINTER_OUTPUT_DIR; SINTER_DATASET; and the job's compiler settings as
/// runJob gives them to its own session: SINTER_COMPILER, SINTER_MEMORY_BUDGET,
/// SINTER_ALLOW_FALLBACK, with debug SINTER_DEBUG and SINTER_DUMP_DIR, with
/// checked numerics SINTER_CHECK_NUMERICS at least 1, SINTER_DEVICE when the
/// job names a device (--device, n_gpus 1); the rest of the
/// environment as it is) and each hyperparameter as `--key value`
/// arguments, as managed jobs pass them.
int launchProgram(const Job &job, const std::string &device) {
  std::vector<std::string> args = {job.entry_point};
  for (const auto &[key, value] : job.hyperparameters.items()) {
    args.push_back("--" + key);
    args.push_back(value.is_string() ? value.get<std::string>() : value.dump());
  }
  std::map<std::string, std::string> env = {
      {"SINTER_JOB", job.resolved.dump()},
      {"SINTER_HYPERPARAMETERS", job.hyperparameters.dump()},
      {"SINTER_OUTPUT_DIR", job.output_dir},
      {"SINTER_DATASET", job.dataset},
      {"SINTER_COMPILER", job.compiler_enabled ? "1" : "0"},
      {"SINTER_MEMORY_BUDGET", std::to_string(job.memory_budget)},
      {"SINTER_MEMORY_BUDGET_HARD", job.memory_budget_hard ? "1" : "0"},
      {"SINTER_ALLOW_FALLBACK", job.allow_fallback ? "1" : "0"},
  };
  if (!device.empty())
    env["SINTER_DEVICE"] = device;
  if (job.compiler_debug) {
    env["SINTER_DEBUG"] = "4";
    env["SINTER_DUMP_DIR"] = job.output_dir + "/debug";
  }
  if (job.check_numerics)
    env["SINTER_CHECK_NUMERICS"] =
        std::to_string(std::max(runtime::environment().check_numerics, 1));
  std::printf("launching %s", job.entry_point.c_str());
  for (size_t i = 1; i < args.size(); ++i)
    std::printf(" %s", args[i].c_str());
  std::printf("\n");
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0)
    throw JobError("entry_point", std::string("cannot start a process: ") + std::strerror(errno));
  if (child == 0) {
    for (const auto &[key, value] : env)
      setenv(key.c_str(), value.c_str(), 1);
    std::vector<char *> argv;
    for (std::string &arg : args)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(job.entry_point.c_str(), argv.data());
    std::fprintf(stderr, "sinter-train: cannot run %s: %s\n", job.entry_point.c_str(),
                 std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status)) {
    std::printf("%s exited with status %d\n", job.entry_point.c_str(), WEXITSTATUS(status));
    return WEXITSTATUS(status);
  }
  std::printf("%s was killed by signal %d\n", job.entry_point.c_str(), WTERMSIG(status));
  return 128 + WTERMSIG(status);
}

//===----------------------------------------------------------------------===//
// The training loop
//===----------------------------------------------------------------------===//

/// Median step times of fresh models, compiled and eager, for the
/// throughput line: `steps` steps of each after one warm-up step each (the
/// compilation), interleaved (a compiled step, an eager step, ...), so that
/// a machine whose speed drifts, or which another program shares for a
/// while, slows both alike.
struct Throughput {
  double compiled = 0, eager = 0;
  /// Set when other processes wanted the cores meanwhile (CoreShare).
  std::optional<std::string> busy;
};
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

int trainZooModel(const Job &job, const RunOptions &options) {
  Clock::time_point jobStart = Clock::now();
  createFolder(job.output_dir, "output_dir");
  Task task = makeTask(job);
  std::printf("data: %s\n", task.dataNote.c_str());
  int64_t trainExamples = task.train->size();

  // Batch size: given, or the largest whose planned step fits.
  int64_t batchSize = 0;
  if (job.batch_size) {
    batchSize = *job.batch_size;
  } else {
    data::DataLoader probe(task.train, {.batch_size = 1, .prefetch = 0});
    data::Batch one = probe.next();
    batchSize = largestBatch(
        [&](int64_t b) {
          std::shared_ptr<nn::Module> model = task.makeModel();
          optim::AdamW optimizer(model->parameters(), {.lr = 1e-3});
          enterSteadyState(optimizer);
          Shape in = one.inputs.shape(), out = one.targets.shape();
          in[0] = out[0] = b;
          data::Batch batch{
              zeros(in, one.inputs.dtype()), zeros(out, one.targets.dtype()), ones({b}), b, 0, 0};
          task.step(*model, optimizer, batch);
          return plan_step({.build_kernels = false});
        },
        job.memory_budget, "batch size auto");
    batchSize = std::min(batchSize, trainExamples);
    if (!job.compiler_enabled)
      std::printf("(planned as a compiled step: eager steps are not planned, and they keep "
                  "more memory)\n");
  }
  if (batchSize > trainExamples)
    throw JobError("hyperparameters.batch_size", std::to_string(batchSize) + " is more than the " +
                                                     std::to_string(trainExamples) +
                                                     " training examples");
  // Note [Data-parallel jobs] in DataParallel.cpp.
  const int64_t world = distributed::get_world_size(), rank = distributed::get_rank();
  const bool lead = rank == 0; // writes the checkpoints, metrics and summary
  const int64_t micro = job.gradient_accumulation_steps; // micro-batches a step
  const std::string microNote =
      micro > 1 ? " x " + std::to_string(micro) + " micro-batches" : std::string();
  if (world > 1)
    std::printf("data parallel: rank %lld of %lld, %lld processes on each of %lld machines; "
                "batch %lld%s a rank, %lld a step\n",
                static_cast<long long>(rank), static_cast<long long>(world),
                static_cast<long long>(job.processes_per_host),
                static_cast<long long>(job.instance_count), static_cast<long long>(batchSize),
                microNote.c_str(), static_cast<long long>(batchSize * micro * world));
  else if (micro > 1)
    std::printf("gradient accumulation: batch %lld%s, %lld a step\n",
                static_cast<long long>(batchSize), microNote.c_str(),
                static_cast<long long>(batchSize * micro));
  double lr = job.learning_rate;
  if (job.scale_learning_rate) {
    lr = job.native_learning_rate / static_cast<double>(job.native_batch_size) *
         static_cast<double>(batchSize) * static_cast<double>(world) * static_cast<double>(micro);
    std::printf("learning rate scaled: %g / %lld * %lld * %lld%s = %g (native batch %lld, lr %g)\n",
                job.native_learning_rate, static_cast<long long>(job.native_batch_size),
                static_cast<long long>(batchSize), static_cast<long long>(world),
                micro > 1 ? (" * " + std::to_string(micro)).c_str() : "", lr,
                static_cast<long long>(job.native_batch_size), job.native_learning_rate);
  }

  data::DataLoader loader(
      task.train, {.batch_size = batchSize, .seed = job.seed, .rank = rank, .world_size = world});
  int64_t perEpoch = loader.batches_per_epoch() / micro; // steps
  if (perEpoch == 0)
    throw JobError("hyperparameters.gradient_accumulation_steps",
                   "is " + std::to_string(micro) + ", and an epoch has only " +
                       std::to_string(loader.batches_per_epoch()) + " batches of " +
                       std::to_string(batchSize) + " a rank: not one step");
  int64_t total = job.epochs > 0 ? perEpoch * job.epochs : job.steps;
  if (job.epochs > 0 && job.steps > 0)
    total = std::min(total, job.steps);
  int64_t warmup = job.warmup_steps >= 0 ? job.warmup_steps : std::min<int64_t>(50, total / 10 + 1);
  if (warmup > total)
    throw JobError("hyperparameters.warmup_steps", "is " + std::to_string(warmup) +
                                                       ", more than the job's " +
                                                       std::to_string(total) + " steps");

  manual_seed(job.seed);
  std::shared_ptr<nn::Module> model = task.makeModel();
  int64_t parameters = 0;
  for (const Tensor &p : model->parameters())
    parameters += p.numel();
  // Every rank starts from rank 0's parameters (the same seed gives the
  // same, and this makes sure).
  if (world > 1)
    distributed::broadcast(model->parameters());
  // Note [Sharded optimizer state] in sinter/optim/Optimizer.h: the
  // optimizer reduces and clips the gradients itself.
  const bool sharded = job.zero_stage == 1;
  optim::AdamW optimizer(model->parameters(), {.lr = lr,
                                               .weight_decay = job.weight_decay,
                                               .shard_state = sharded,
                                               .max_grad_norm = sharded ? job.grad_clip : 0});
  if (sharded)
    std::printf("optimizer state sharded over %lld ranks (ZeRO stage 1)\n",
                static_cast<long long>(world));
  optim::WarmupCosine schedule(optimizer, warmup, total + 1, lr * 0.05);

  std::string checkpoint =
      options.checkpoint.empty() ? job.output_dir + "/checkpoint.safetensors" : options.checkpoint;
  Position at;
  // Every job writes a checkpoint at its end, so this is always needed.
  const std::string data = dataFingerprint(*task.train);
  // A worker that its launcher started again (sinter-run --max-restarts,
  // torchrun) continues from the job's checkpoint as --resume would; one
  // restarted before the first checkpoint starts over.
  bool resume = options.resume;
  StatusOr<runtime::World> launched =
      runtime::worldFromEnvironment([](const char *name) { return std::getenv(name); });
  if (!resume && launched.ok() && launched->restart > 0) {
    resume = fs::exists(checkpoint);
    std::printf("restart %d of the job's workers: %s %s\n", launched->restart,
                resume ? "resuming from" : "starting over: no checkpoint yet at",
                checkpoint.c_str());
  }
  if (resume) {
    at = loadCheckpoint(checkpoint, job, batchSize, total, perEpoch, *model, optimizer, schedule,
                        data);
    if (at.step >= total) {
      std::printf("the checkpoint %s is at the job's last step (%lld): nothing to resume\n",
                  checkpoint.c_str(), static_cast<long long>(total));
      return 0;
    }
    // An artifact session's file is the user's: this job's checkpoints go
    // to its own output_dir.
    if (at.fromSession)
      checkpoint = job.output_dir + "/checkpoint.safetensors";
    loader.seek(at.epoch, at.batch);
    if (at.fromSession)
      std::printf("resumed from the artifact session's state %s at step %lld (epoch %lld, "
                  "batch %lld of this job's data order); checkpoints go to %s\n",
                  options.checkpoint.c_str(), static_cast<long long>(at.step),
                  static_cast<long long>(at.epoch + 1), static_cast<long long>(at.batch),
                  checkpoint.c_str());
    else
      std::printf("resumed from %s at step %lld\n", checkpoint.c_str(),
                  static_cast<long long>(at.step));
  }
  const Device device = Session::current().device();
  std::printf(
      "model %s: %lld parameters; %lld steps of batch %lld%s (%lld a epoch), AdamW lr %g, "
      "%s on %s%s\n",
      job.entry_point.c_str(), static_cast<long long>(parameters), static_cast<long long>(total),
      static_cast<long long>(batchSize), microNote.c_str(), static_cast<long long>(perEpoch), lr,
      job.compiler_enabled ? "compiled" : "eager", device.toString().c_str(),
      device.isCuda() && runtime::environment().cuda_simulator ? " (the CUDA simulator)" : "");
  std::fflush(stdout);

  MetricsLog log(lead ? job.output_dir + "/metrics.jsonl" : std::string(), resume ? at.step : 0);
  int64_t saved = resume ? at.step : -1; // the step of the checkpoint on disk
  auto evaluateAndLog = [&](int64_t step) {
    Evaluation e = evaluate(task, *model, task.languageModel ? batchSize : 500, job.eval_batches);
    json row = {{"step", step}, {"split", task.heldOutSplit}, {"loss", e.loss}};
    if (task.languageModel) {
      row["perplexity"] = std::exp(e.loss);
      std::printf("%s at step %lld: loss %.4f, perplexity %.2f (unigram baseline %.4f)\n",
                  task.heldOutSplit.c_str(), static_cast<long long>(step), e.loss, std::exp(e.loss),
                  task.unigramLoss);
    } else {
      row["accuracy"] = e.accuracy;
      std::printf("%s at step %lld: loss %.4f, accuracy %.2f%% (%lld images)\n",
                  task.heldOutSplit.c_str(), static_cast<long long>(step), e.loss, 100 * e.accuracy,
                  static_cast<long long>(e.examples));
    }
    log.write(row);
    return e;
  };

  Progress progress(total, job.log_every);
  std::vector<double> stepSeconds;
  Clock::time_point trainStart = Clock::now();
  int64_t firstStep = at.step;
  Evaluation last;
  bool evaluated = false;
  StepMemory trainMemory;
  for (int64_t step = at.step; step < total; ++step) {
    Clock::time_point stepStart = Clock::now();
    const int64_t epochBefore = loader.epoch();
    std::vector<data::Batch> batches;
    for (int64_t k = 0; k < micro; ++k)
      batches.push_back(loader.next());
    const data::Batch &batch = batches.back();
    double stepLr = optimizer.lr();
    Tensor loss = task.step(*model, optimizer, batches, job.grad_clip, sharded);
    schedule.step();
    mark_step();
    double value = loss.item<double>();
    stepSeconds.push_back(secondsSince(stepStart));
    if (!std::isfinite(value)) {
      std::fprintf(stderr,
                   "sinter-train: the loss is %g at step %lld (learning rate %g too "
                   "high?); stopping\n",
                   value, static_cast<long long>(step + 1), stepLr);
      return 1;
    }
    int64_t done = step + 1;
    log.write({{"step", done}, {"split", "train"}, {"loss", value}, {"lr", stepLr}});
    if (done - firstStep <= 2) // the steady step (the first creates AdamW's state)
      trainMemory = metrics().last_step_memory;
    // Speed over the last steps (the first ones compile).
    size_t recent = std::min<size_t>(stepSeconds.size(), 20);
    double perStep = 0;
    for (size_t k = stepSeconds.size() - recent; k < stepSeconds.size(); ++k)
      perStep += stepSeconds[k] / static_cast<double>(recent);
    progress.update(done, batch.epoch, value, stepLr,
                    static_cast<double>(batchSize * micro) / perStep,
                    perStep * static_cast<double>(total - done));
    // An epoch of batches that K micro-batches do not divide ends within a
    // step: that step is the epoch's last.
    bool epochEnd = loader.index() == 0 || loader.epoch() != epochBefore;
    if (job.eval_every > 0 ? done % job.eval_every == 0 : epochEnd) {
      last = evaluateAndLog(done);
      evaluated = done == total;
    }
    bool stopping = options.stop_at > 0 && done == options.stop_at;
    bool saving = stopping || done == total ||
                  (job.checkpoint_every > 0 ? done % job.checkpoint_every == 0 : epochEnd);
    optim::Optimizer::State state;
    if (saving && (lead || sharded)) {
      state = optimizer.state_dict();
      if (sharded)
        mark_step(); // every rank's part of the gather
    }
    if (lead && saving) {
      log.sync();
      try {
        saveCheckpoint(checkpoint, job, batchSize, total, *model, state, schedule,
                       {done, loader.epoch(), loader.index()}, data);
      } catch (const sinter::Error &error) {
        // Nothing was renamed over the last checkpoint (write_file_atomically).
        throw JobError(checkpoint,
                       "the checkpoint of step " + std::to_string(done) + " was not written (" +
                           error.message() + "); " +
                           (saved >= 0 ? "the checkpoint of step " + std::to_string(saved) +
                                             " is intact there: make room and continue with "
                                             "--resume"
                                       : std::string("no earlier checkpoint of this run exists")));
      }
      saved = done;
    }
    if (stopping) {
      std::printf("stopped after step %lld (--stop-at); continue with --resume\n",
                  static_cast<long long>(done));
      return 0;
    }
  }
  double trainSeconds = secondsSince(trainStart);
  if (!evaluated)
    last = evaluateAndLog(total);

  // The summary.
  std::vector<double> sorted = stepSeconds;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  int64_t ran = total - firstStep;
  Metrics m = metrics();
  json summary = {
      {"steps", total},
      {"batch_size", batchSize},
      {"learning_rate", lr},
      {"train_seconds", trainSeconds},
      {"step_ms_median", 1000 * median},
      {"gradient_accumulation_steps", micro},
      {"zero_stage", job.zero_stage},
      {"samples_per_s", median > 0 ? static_cast<double>(batchSize * micro) / median : 0},
      {"compile_s", m.compile.total()},
      {"compilations", m.compilations},
      {"compiled_steps", m.compiled_steps},
      {"eager_steps", m.eager_steps},
      {"fallbacks", m.fallbacks},
      {"fallback_reasons", m.fallback_reasons},
      {"peak_bytes", runtime::HostAllocator::get().stats().peak_in_use},
      {task.heldOutSplit + "_loss", last.loss}};
  std::printf("\ntrained %lld steps in %.1f s: %.2f ms a step (median), %.0f samples/s; "
              "%lld compilations (%.1f s)\n",
              static_cast<long long>(ran), trainSeconds, 1000 * median,
              median > 0 ? static_cast<double>(batchSize * micro) / median : 0,
              static_cast<long long>(m.compilations), m.compile.total());
  if (m.fallbacks > 0)
    std::printf("%lld steps or reads ran on the reference executor (compiler_config.allow_fallback)"
                ", far slower than %s: %s\n",
                static_cast<long long>(m.fallbacks), job.compiler_enabled ? "compiled" : "eager",
                m.fallback_reasons.front().c_str());
  if (job.compiler_enabled) {
    const StepMemory &memory = trainMemory;
    if (Session::current().device().isCuda())
      // The device's memory is the executable's, not the host allocator's:
      // planned, not measured.
      std::printf("memory: %.1f MiB a step on %s (planned) + %.1f MiB of parameters and "
                  "optimizer state\n",
                  mib(memory.planned_peak_bytes), Session::current().device().toString().c_str(),
                  mib(memory.persistent_bytes));
    else
      std::printf("memory: %.1f MiB a step (planned %.1f MiB, measured %.1f MiB) + %.1f MiB of "
                  "parameters and optimizer state; process peak %.1f MiB\n",
                  mib(memory.planned_peak_bytes), mib(memory.planned_peak_bytes),
                  mib(memory.measured_peak_bytes), mib(memory.persistent_bytes),
                  mib(runtime::HostAllocator::get().stats().peak_in_use));
    summary["planned_step_bytes"] = memory.planned_peak_bytes;
    summary["persistent_bytes"] = memory.persistent_bytes;
    if (memory.memory_budget > 0) {
      summary["memory_budget"] = memory.memory_budget;
      summary["over_budget_bytes"] = memory.over_budget_bytes;
      if (memory.over_budget_bytes > 0)
        std::printf("memory budget %s: the step's smallest plan is %s over it (it ran over; "
                    "memory_budget_hard refuses such a step)\n",
                    runtime::formatByteCount(memory.memory_budget).c_str(),
                    runtime::formatByteCount(memory.over_budget_bytes).c_str());
    }
    for (const StepMemory::Category &category : memory.peak_by_category)
      if (category.name == "optimizer state")
        summary["optimizer_state_bytes"] = category.bytes;
  } else {
    std::printf("memory: process peak %.1f MiB\n",
                mib(runtime::HostAllocator::get().stats().peak_in_use));
  }
  if (task.languageModel) {
    std::printf("%s loss %.4f (perplexity %.2f); unigram baseline %.4f\n",
                task.heldOutSplit.c_str(), last.loss, std::exp(last.loss), task.unigramLoss);
    summary["unigram_loss"] = task.unigramLoss;
  } else {
    std::printf("%s accuracy %.2f%%\n", task.heldOutSplit.c_str(), 100 * last.accuracy);
    summary[task.heldOutSplit + "_accuracy"] = last.accuracy;
  }
  if (job.compare_eager_steps > 0 && job.compiler_enabled && world > 1)
    std::printf("(compare_eager_steps: not measured in a data-parallel job; run it on one "
                "process)\n");
  if (job.compare_eager_steps > 0 && job.compiler_enabled && world == 1) {
    Throughput t = compareWithEager(task, batchSize, job.compare_eager_steps, job.seed + 1);
    std::printf("throughput (median of %lld steps each, interleaved): compiled %.0f samples/s, "
                "eager %.0f samples/s: compiled is %.2fx eager\n",
                static_cast<long long>(job.compare_eager_steps), batchSize / t.compiled,
                batchSize / t.eager, t.eager / t.compiled);
    if (t.busy)
      std::printf("  (%s: on a quiet machine both are faster, and the ratio may differ)\n",
                  t.busy->c_str());
    summary["compiled_samples_per_s"] = batchSize / t.compiled;
    summary["eager_samples_per_s"] = batchSize / t.eager;
    summary["machine_busy"] = t.busy.has_value();
  }
  summary["world_size"] = world;
  if (!lead) {
    std::printf("rank %lld done; rank 0 writes the job's files\n", static_cast<long long>(rank));
    return 0;
  }
  std::string png = plotLoss(job.output_dir, log.path(), task.heldOutSplit);
  io::write_file_atomically(job.output_dir + "/summary.json", {summary.dump(2), "\n"},
                            "sinter-train");
  std::printf("wrote %s, %s/summary.json, %s%s (job took %.1f s)\n", log.path().c_str(),
              job.output_dir.c_str(), checkpoint.c_str(), png.empty() ? "" : (", " + png).c_str(),
              secondsSince(jobStart));
  return 0;
}

} // namespace

int runJob(const Job &job, const RunOptions &options) {
  if (std::optional<int> status =
          startDataParallel(job, options.command, /*join=*/!job.entry_is_program))
    return *status;
  std::printf("Found configuration for Training Compiler\n");
  if (job.compiler_enabled)
    std::printf("Configuring Sinter Training Compiler...\n");
  else
    std::printf("Training Compiler disabled: steps run eagerly (one kernel per op)\n");
  if (job.compiler_debug)
    std::printf("Training Compiler set to debug mode (dumps in %s/debug, metrics at exit)\n",
                job.output_dir.c_str());
  std::fflush(stdout);
  // The device: --device, else cuda:0 for a job of one GPU, else
  // SINTER_DEVICE's (the CPU without it).
  std::string device = !options.device.empty() ? options.device
                       : job.n_gpus == 1       ? std::string("cuda:0")
                                               : std::string();
  if (job.entry_is_program)
    return launchProgram(job, device);

  compiler::install();
  // The job's session: its compiler_config over the environment's defaults.
  Settings settings = Settings::fromEnvironment();
  if (!device.empty())
    settings.device = Device::parse(device);
  CompilerConfig &config = settings.compiler;
  config.enabled = job.compiler_enabled;
  config.use_reference = false;
  config.memory_budget = job.memory_budget;
  config.memory_budget_hard = job.memory_budget_hard;
  config.allow_fallback = job.allow_fallback;
  if (job.check_numerics)
    config.check_numerics = std::max(config.check_numerics, 1);
  if (job.compiler_debug) {
    config.debug = 4;
    config.dump_dir = job.output_dir + "/debug";
    createFolder(config.dump_dir, "compiler_config.debug");
  }
  Session::Use session(settings);
  return trainZooModel(job, options);
}

} // namespace sinter::tools
