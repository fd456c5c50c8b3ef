//===- Train.cpp - running a training job ---------------------------------===//
//
// A job's life: configure the compiler, read the data, build the model (or
// launch the user's program: UserProgram.cpp), pick the batch size and
// learning rate, train with a progress line, evaluate on the held-out split,
// write metrics, checkpoints and a loss curve into output_dir, and
// summarise. What it trains is Task.cpp's; the files and lines it writes,
// JobOutput.cpp's.
//
//===----------------------------------------------------------------------===//
#include "Train.h"

#include "Checkpoint.h"
#include "DataParallel.h"
#include "JobOutput.h"
#include "Task.h"
#include "UserProgram.h"

#include "LargestBatch.h"

#include "sinter/Compiler/StepCompiler.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/ByteCount.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/World.h"
#include "sinter/sinter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sinter::tools {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// How a job trains (Note [Data-parallel jobs] in DataParallel.cpp): its
/// batch (given, or the largest whose planned step fits), its world, the
/// micro-batches of a step and the learning rate (scaled when the job
/// says), each printed as chosen.
struct TrainingPlan {
  int64_t batchSize = 0;
  int64_t world = 1, rank = 0;
  int64_t micro = 1; // micro-batches a step
  std::string microNote;
  double lr = 0;
};

TrainingPlan planTraining(const Job &job, const Task &task) {
  int64_t trainExamples = task.train->size();
  int64_t batchSize = 0;
  // Batch size: given, or the largest whose planned step fits.
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
  const int64_t world = distributed::get_world_size(), rank = distributed::get_rank();
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
  return {batchSize, world, rank, micro, microNote, lr};
}

/// What the training loop did, for the summary.
struct Trained {
  std::vector<double> stepSeconds;
  double trainSeconds = 0;
  int64_t firstStep = 0, total = 0; // the run's first step, the job's steps
  Evaluation last;                  // at the last step
  StepMemory memory;                // of a steady step
};

/// Prints the job's summary (speed, memory, the held-out result, compiled
/// against eager when the job asks) and, on rank 0, writes summary.json and
/// the loss curve. Returns the job's exit status.
int writeSummary(const Job &job, const Task &task, const TrainingPlan &plan, const Trained &trained,
                 const std::string &metricsPath, const std::string &checkpoint,
                 Clock::time_point jobStart) {
  const int64_t batchSize = plan.batchSize, micro = plan.micro, world = plan.world,
                rank = plan.rank, total = trained.total, firstStep = trained.firstStep;
  const double lr = plan.lr, trainSeconds = trained.trainSeconds;
  const std::vector<double> &stepSeconds = trained.stepSeconds;
  const Evaluation &last = trained.last;
  const StepMemory &trainMemory = trained.memory;
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
  if (rank != 0) {
    std::printf("rank %lld done; rank 0 writes the job's files\n", static_cast<long long>(rank));
    return 0;
  }
  std::string png = plotLoss(job.output_dir, metricsPath, task.heldOutSplit);
  io::write_file_atomically(job.output_dir + "/summary.json", {summary.dump(2), "\n"},
                            "sinter-train");
  std::printf("wrote %s, %s/summary.json, %s%s (job took %.1f s)\n", metricsPath.c_str(),
              job.output_dir.c_str(), checkpoint.c_str(), png.empty() ? "" : (", " + png).c_str(),
              secondsSince(jobStart));
  return 0;
}

int trainZooModel(const Job &job, const RunOptions &options) {
  Clock::time_point jobStart = Clock::now();
  createFolder(job.output_dir, "output_dir");
  Task task = makeTask(job);
  std::printf("data: %s\n", task.dataNote.c_str());

  TrainingPlan plan = planTraining(job, task);
  const int64_t batchSize = plan.batchSize, world = plan.world, rank = plan.rank,
                micro = plan.micro;
  const std::string &microNote = plan.microNote;
  const double lr = plan.lr;
  const bool lead = rank == 0; // writes the checkpoints, metrics and summary

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

  Trained trained{stepSeconds, trainSeconds, firstStep, total, last, trainMemory};
  return writeSummary(job, task, plan, trained, log.path(), checkpoint, jobStart);
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
  config.allow_tf32 = config.allow_tf32 || job.allow_tf32;
  if (job.compiler_debug) {
    config.debug = 4;
    config.dump_dir = job.output_dir + "/debug";
    createFolder(config.dump_dir, "compiler_config.debug");
  }
  Session::Use session(settings);
  return trainZooModel(job, options);
}

} // namespace sinter::tools
