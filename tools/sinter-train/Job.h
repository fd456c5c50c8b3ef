//===- Job.h - a training job, as a job file describes it ------*- C++ -*-===//
//
// The job model of managed training compilers, run locally: an entry point
// (a model of the zoo, or the user's own program), node and device counts,
// hyperparameters, a compiler config, a distribution switch, a dataset and
// an output folder. parseJob checks everything before anything starts:
// unknown keys, wrong types and impossible values are errors naming the
// key's path (`hyperparameters.batch_size`).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_JOB_H
#define SINTER_TOOLS_JOB_H

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::tools {

/// A job file or flag that cannot be run; what() is "<path>: <problem>".
class JobError : public std::runtime_error {
public:
  JobError(const std::string &path, const std::string &problem)
      : std::runtime_error(path + ": " + problem) {}
};

/// The zoo models a job trains by name.
inline constexpr std::array<std::string_view, 5> kJobModels = {"mlp", "lenet", "resnet18",
                                                               "gpt-mini", "gpt-small"};
/// kJobModels as a list for messages: "mlp, lenet, ...".
std::string jobModels();

struct Job {
  std::string entry_point;
  bool entry_is_program = false; ///< a path to run instead of a zoo model
  bool language_model = false;   ///< gpt-*: text data, next-token loss
  int64_t instance_count = 1, n_gpus = 0;
  /// distribution.processes_per_host: workers on each machine (default
  /// n_gpus, or 1 without GPUs; 1 without distribution).
  int64_t processes_per_host = 1;
  bool compiler_enabled = true, compiler_debug = false, distribution_enabled = false;
  /// compiler_config.allow_fallback: a step the compiler cannot compile runs
  /// on the reference executor (said, and counted in the summary) instead of
  /// stopping the job with exit status 2 (Note [Fallbacks are said]).
  bool allow_fallback = false;
  /// compiler_config.check_numerics: every kernel's results are checked for
  /// NaN as they are written, and the first stops the job with exit status 2
  /// naming the step, the kernel and the model's line (SINTER_CHECK_NUMERICS;
  /// Note [Checked numerics] in sinter/runtime/Program.h).
  bool check_numerics = false;
  /// compiler_config.allow_tf32: matrix products on a GPU may use TF32
  /// (CompilerConfig::allow_tf32; SINTER_ALLOW_TF32).
  bool allow_tf32 = false;
  std::string dataset; ///< "fashion-mnist", or a path
  std::string output_dir;

  // Hyperparameters.
  std::optional<int64_t> batch_size; ///< none: "auto"
  double learning_rate = 0;
  int64_t epochs = 0, steps = 0; ///< one of them given; steps caps epochs
  int64_t warmup_steps = -1;     ///< -1: a tenth of the steps, at most 50
  double weight_decay = 0.01, grad_clip = 0;
  /// Micro-batches of batch_size whose gradients each step accumulates.
  int64_t gradient_accumulation_steps = 1;
  /// 1: AdamW's state sharded over the ranks (ZeRO stage 1).
  int64_t zero_stage = 0;
  uint64_t seed = 0;
  bool scale_learning_rate = false;
  int64_t native_batch_size = 0;
  double native_learning_rate = 0;
  int64_t memory_budget = 0;       ///< bytes; 0: none
  bool memory_budget_hard = false; ///< a step over the budget is refused
  int64_t eval_every = 0;          ///< steps; 0: at the end of each epoch
  int64_t checkpoint_every = 0;    ///< steps; 0: at the end of each epoch
  int64_t log_every = 100;
  int64_t eval_batches = 0; ///< 0: the whole held-out split
  int64_t compare_eager_steps = 0;
  // Language models.
  int64_t context = 0;            ///< 0: the model's
  std::string tokenizer = "byte"; ///< byte, bpe, or a folder with encoder.json + vocab.bpe
  int64_t vocab_size = 512;       ///< of a BPE vocabulary trained on the corpus,
                                  ///< or of a .bin token file
  bool vocab_size_set = false;    ///< given in the job (a .bin file: ids below it)
  double dropout = 0;             ///< of the model's dropout layers (language models)

  /// The hyperparameters as given (a user program gets them back).
  nlohmann::json hyperparameters = nlohmann::json::object();
  /// The whole job after defaults and flags, as a job file would say it.
  nlohmann::json resolved;
};

/// Checks and reads a job description. Throws JobError.
Job parseJob(const nlohmann::json &document);

/// Reads a job file (JSON). Throws JobError (path "<file>") when it is
/// missing or not JSON, with the line and column of a syntax error.
nlohmann::json readJobFile(const std::string &path);

} // namespace sinter::tools

#endif // SINTER_TOOLS_JOB_H
