//===- Job.cpp - a training job, as a job file describes it ---------------===//
#include "Job.h"

#include "sinter/runtime/ByteCount.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

namespace sinter::tools {
namespace {

using json = nlohmann::json;

/// Edit distance, for "did you mean" hints.
size_t distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string typeName(const json &value) {
  if (value.is_number_integer())
    return "an integer";
  if (value.is_number())
    return "a number";
  if (value.is_boolean())
    return "a boolean";
  if (value.is_string())
    return "a string";
  if (value.is_array())
    return "an array";
  if (value.is_object())
    return "an object";
  return "null";
}

/// One JSON object of the job: typed reads by key, and a check that no key
/// was left unread (a misspelt key must not be silently ignored).
class Section {
public:
  /// `stringValues`: a value may also be given as a string where its type
  /// is unambiguous ("true", "64", "5e-5"), as the managed training service
  /// passed hyperparameters.
  Section(const json &object, std::string path, bool stringValues = false)
      : object_(object), path_(std::move(path)), stringValues_(stringValues) {
    if (!object_.is_object())
      throw JobError(path_.empty() ? "job" : path_,
                     "must be a JSON object, got " + typeName(object_));
  }
  std::string pathOf(const std::string &key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  /// The value of `key` (declaring it known), or null when absent.
  const json *find(const std::string &key) {
    known_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  bool has(const std::string &key) const { return object_.contains(key); }
  /// The value of `key` when present, checked by `is` (what a value of the
  /// kind `expected` passes).
  using FromString = std::optional<json> (*)(const std::string &);
  const json *typed(const std::string &key, bool (*is)(const json &), const char *expected,
                    FromString fromString = nullptr) {
    const json *value = find(key);
    if (value && !is(*value) &&
        !(stringValues_ && fromString && value->is_string() &&
          fromString(value->get<std::string>())))
      throw JobError(pathOf(key), std::string("must be ") + expected + ", got " + typeName(*value) +
                                      " " + value->dump());
    return value;
  }
  std::optional<bool> boolean(const std::string &key) {
    const json *value = typed(
        key, [](const json &v) { return v.is_boolean(); }, "true or false", asBoolean);
    return value ? std::optional(converted(*value, asBoolean).get<bool>()) : std::nullopt;
  }
  std::optional<int64_t> integer(const std::string &key, int64_t minimum) {
    const json *value = typed(
        key, [](const json &v) { return v.is_number_integer(); }, "an integer", asInteger);
    if (!value)
      return std::nullopt;
    int64_t number = converted(*value, asInteger).get<int64_t>();
    if (number < minimum)
      throw JobError(pathOf(key), "must be at least " + std::to_string(minimum) + ", got " +
                                      std::to_string(number));
    return number;
  }
  std::optional<double> number(const std::string &key, double minimum, bool strictly) {
    const json *value = typed(
        key, [](const json &v) { return v.is_number(); }, "a number", asNumber);
    if (!value)
      return std::nullopt;
    double number = converted(*value, asNumber).get<double>();
    if (strictly ? number <= minimum : number < minimum) {
      char bound[32];
      std::snprintf(bound, sizeof bound, "%g", minimum);
      throw JobError(pathOf(key), std::string("must be ") + (strictly ? "above " : "at least ") +
                                      bound + ", got " + value->dump());
    }
    return number;
  }
  std::optional<std::string> string(const std::string &key) {
    const json *value = typed(
        key, [](const json &v) { return v.is_string() && !v.get<std::string>().empty(); },
        "a non-empty string");
    return value ? std::optional(value->get<std::string>()) : std::nullopt;
  }
  // A string's value, where it is one of the type's.
  static std::optional<json> asBoolean(const std::string &text) {
    if (text == "true" || text == "True")
      return json(true);
    if (text == "false" || text == "False")
      return json(false);
    return std::nullopt;
  }
  static std::optional<json> asInteger(const std::string &text) {
    int64_t value = 0;
    auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || code != std::errc() || end != text.data() + text.size())
      return std::nullopt;
    return json(value);
  }
  static std::optional<json> asNumber(const std::string &text) {
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
      return std::nullopt;
    return json(value);
  }
  json converted(const json &value, FromString fromString) const {
    return value.is_string() ? *fromString(value.get<std::string>()) : value;
  }

  /// Throws for the first key nothing read.
  void rejectUnknown() const {
    for (const auto &[key, value] : object_.items()) {
      if (known_.count(key))
        continue;
      std::string hint;
      size_t best = 3;
      for (const std::string &candidate : known_)
        if (size_t d = distance(key, candidate); d < best)
          best = d, hint = candidate;
      std::string expected;
      for (const std::string &candidate : known_)
        expected += (expected.empty() ? "" : ", ") + candidate;
      throw JobError(pathOf(key), "unknown key" +
                                      (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") +
                                      "; expected one of: " + expected);
    }
  }

private:
  const json &object_;
  std::string path_;
  bool stringValues_ = false;
  std::set<std::string> known_;
};

/// A boolean that a config field and hyperparameter aliases may each give;
/// they must agree.
std::optional<bool> agreeing(Section &section, const std::string &key, std::optional<bool> previous,
                             const std::string &previousPath) {
  for (const std::string &spelling : {key, "sagemaker_" + key}) {
    std::optional<bool> value = section.boolean(spelling);
    if (!value)
      continue;
    if (previous && *previous != *value)
      throw JobError(section.pathOf(spelling), "is " + json(*value).dump() + " but " +
                                                   previousPath + " is " + json(*previous).dump());
    previous = value;
  }
  return previous;
}

/// Whether `path` exists (false when it cannot be looked at either).
bool exists(const std::string &path) {
  std::error_code error;
  return std::filesystem::exists(path, error);
}

bool isFile(const std::string &path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

/// An output folder that exists is a folder; one that does not can be made
/// in its nearest existing parent, a writable folder.
void checkOutputDir(const std::string &dir) {
  std::error_code error;
  std::filesystem::path path(dir);
  if (exists(dir) && !std::filesystem::is_directory(path, error))
    throw JobError("output_dir", "\"" + dir + "\" is a file, not a folder");
  std::filesystem::path parent = path;
  while (!parent.empty() && !exists(parent.string()))
    parent = parent.parent_path();
  if (parent.empty())
    parent = ".";
  if (!std::filesystem::is_directory(parent, error))
    throw JobError("output_dir", "\"" + dir + "\" cannot be made: " + parent.string() +
                                     " is a file, not a folder");
  if (::access(parent.c_str(), W_OK) != 0)
    throw JobError("output_dir", "\"" + dir + "\" cannot be written: " + parent.string() +
                                     " is not writable (" + std::strerror(errno) + ")");
}

} // namespace

std::string jobModels() {
  std::string list;
  for (std::string_view model : kJobModels)
    list += (list.empty() ? "" : ", ") + std::string(model);
  return list;
}

json readJobFile(const std::string &path) {
  std::ifstream in(path);
  if (!in.good())
    throw JobError(path, "cannot open the job file");
  // A key given twice in one object is refused: JSON leaves it open, and
  // nlohmann's last-wins would silently drop the setting the user saw first.
  std::vector<std::set<std::string>> keys; // of each open object
  std::string repeated;
  auto noRepeats = [&](int, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::object_start)
      keys.emplace_back();
    else if (event == json::parse_event_t::object_end)
      keys.pop_back();
    else if (event == json::parse_event_t::key &&
             !keys.back().insert(parsed.get<std::string>()).second && repeated.empty())
      repeated = parsed.get<std::string>();
    return true;
  };
  json document;
  try {
    document = json::parse(in, noRepeats);
  } catch (const json::exception &error) { // a syntax error, a number past any double
    throw JobError(path, std::string("not valid JSON: ") + error.what());
  }
  if (!repeated.empty())
    throw JobError(path, "the key \"" + repeated + "\" is given twice in one object");
  return document;
}

Job parseJob(const json &document) {
  Section top(document, "");
  Job job;
  std::optional<std::string> entry = top.string("entry_point");
  if (!entry)
    throw JobError("entry_point",
                   "is required: a model (" + jobModels() + ") or the path of a training program");
  job.entry_point = *entry;
  if (std::find(kJobModels.begin(), kJobModels.end(), job.entry_point) == kJobModels.end()) {
    if (!isFile(job.entry_point) || ::access(job.entry_point.c_str(), X_OK) != 0)
      throw JobError("entry_point", "\"" + job.entry_point + "\" is neither a model (" +
                                        jobModels() + ") nor an executable file");
    job.entry_is_program = true;
  }
  job.language_model = job.entry_point.rfind("gpt-", 0) == 0;
  job.instance_count = top.integer("instance_count", 1).value_or(1);
  job.n_gpus = top.integer("n_gpus", 0).value_or(0);

  std::optional<bool> enabled, debug, distributed, fallback, numerics, tf32;
  if (const json *config = top.find("compiler_config")) {
    Section section(*config, "compiler_config");
    enabled = section.boolean("enabled");
    debug = section.boolean("debug");
    fallback = section.boolean("allow_fallback");
    numerics = section.boolean("check_numerics");
    tf32 = section.boolean("allow_tf32");
    section.rejectUnknown();
  }
  std::optional<int64_t> perHost;
  if (const json *distribution = top.find("distribution")) {
    // {"enabled": true}, or the managed service's {"pytorchxla": {"enabled":
    // true}}, with "processes_per_host".
    Section section(*distribution, "distribution");
    distributed = section.boolean("enabled");
    if (const json *xla = section.find("pytorchxla")) {
      Section inner(*xla, "distribution.pytorchxla");
      std::optional<bool> enabled = inner.boolean("enabled");
      inner.rejectUnknown();
      if (distributed && enabled && *distributed != *enabled)
        throw JobError("distribution.pytorchxla.enabled", "is " + json(*enabled).dump() +
                                                              " but distribution.enabled is " +
                                                              json(*distributed).dump());
      if (enabled)
        distributed = enabled;
    }
    perHost = section.integer("processes_per_host", 1);
    section.rejectUnknown();
  }

  const json empty = json::object();
  const json *given = top.find("hyperparameters");
  Section hp(given ? *given : empty, "hyperparameters", /*stringValues=*/true);
  if (given)
    job.hyperparameters = *given;
  enabled = agreeing(hp, "training_compiler_enabled", enabled, "compiler_config.enabled");
  debug = agreeing(hp, "training_compiler_debug_mode", debug, "compiler_config.debug");
  distributed = agreeing(hp, "multi_worker_enabled", distributed, "distribution.enabled");
  distributed =
      agreeing(hp, "pytorch_xla_multi_worker_enabled", distributed, "distribution.enabled");
  job.compiler_enabled = enabled.value_or(true);
  job.compiler_debug = debug.value_or(false);
  job.allow_fallback = fallback.value_or(false);
  job.check_numerics = numerics.value_or(false);
  job.allow_tf32 = tf32.value_or(false);
  job.distribution_enabled = distributed.value_or(false);

  if (const json *batch = hp.find("batch_size")) {
    if (batch->is_string() && batch->get<std::string>() == "auto")
      job.batch_size = std::nullopt;
    else
      job.batch_size = hp.integer("batch_size", 1);
  } else {
    job.batch_size = job.language_model ? 8 : 64;
  }
  job.learning_rate =
      hp.number("learning_rate", 0, true).value_or(job.language_model ? 1e-3 : 2e-3);
  std::optional<int64_t> epochs = hp.integer("epochs", 1), steps = hp.integer("steps", 1);
  job.epochs = epochs.value_or(steps ? 0 : 1);
  job.steps = steps.value_or(0);
  job.warmup_steps = hp.integer("warmup_steps", 0).value_or(-1);
  job.weight_decay = hp.number("weight_decay", 0, false).value_or(job.weight_decay);
  job.grad_clip = hp.number("grad_clip", 0, false).value_or(0);
  job.gradient_accumulation_steps = hp.integer("gradient_accumulation_steps", 1).value_or(1);
  job.zero_stage = hp.integer("zero_stage", 0).value_or(0);
  if (job.zero_stage > 1)
    throw JobError("hyperparameters.zero_stage",
                   "is " + std::to_string(job.zero_stage) +
                       ": 0 (every rank keeps all of AdamW's state) or 1 (each keeps 1/world of "
                       "it); stages 2 and 3 are not available");
  job.seed = static_cast<uint64_t>(hp.integer("seed", 0).value_or(0));
  job.scale_learning_rate = hp.boolean("scale_learning_rate").value_or(false);
  job.native_batch_size = hp.integer("native_batch_size", 1).value_or(0);
  job.native_learning_rate = hp.number("native_learning_rate", 0, true).value_or(0);
  if (job.scale_learning_rate && (job.native_batch_size == 0 || job.native_learning_rate == 0))
    throw JobError("hyperparameters.scale_learning_rate",
                   "needs hyperparameters.native_batch_size and native_learning_rate (the batch "
                   "and learning rate the model was tuned at)");
  if (const json *budget = hp.find("memory_budget")) {
    if (budget->is_number_integer() && budget->get<int64_t>() > 0)
      job.memory_budget = budget->get<int64_t>();
    else if (budget->is_string())
      job.memory_budget = runtime::parseByteCount(budget->get<std::string>());
    if (job.memory_budget <= 0)
      throw JobError("hyperparameters.memory_budget",
                     "must be a positive byte count such as 268435456 or \"256MiB\", got " +
                         budget->dump());
  }
  job.memory_budget_hard = hp.boolean("memory_budget_hard").value_or(false);
  if (job.memory_budget_hard && job.memory_budget == 0)
    throw JobError("hyperparameters.memory_budget_hard",
                   "needs hyperparameters.memory_budget (the budget it makes a hard limit)");
  job.eval_every = hp.integer("eval_every", 0).value_or(0);
  job.checkpoint_every = hp.integer("checkpoint_every", 0).value_or(0);
  job.log_every = hp.integer("log_every", 1).value_or(100);
  job.eval_batches = hp.integer("eval_batches", 0).value_or(0);
  job.compare_eager_steps = hp.integer("compare_eager_steps", 0).value_or(0);
  for (const char *key : {"context", "tokenizer", "vocab_size", "dropout"})
    if (hp.has(key) && !job.language_model && !job.entry_is_program)
      throw JobError(std::string("hyperparameters.") + key,
                     "is for language models (gpt-*), not " + job.entry_point);
  job.context = hp.integer("context", 1).value_or(0);
  job.tokenizer = hp.string("tokenizer").value_or("byte");
  job.vocab_size = hp.integer("vocab_size", 256).value_or(512);
  job.vocab_size_set = hp.has("vocab_size");
  job.dropout = hp.number("dropout", 0, false).value_or(0);
  if (job.dropout >= 1)
    throw JobError("hyperparameters.dropout", "must be below 1, got " + hp.find("dropout")->dump());
  if (job.tokenizer != "byte" && job.tokenizer != "bpe" &&
      (!isFile(job.tokenizer + "/encoder.json") || !isFile(job.tokenizer + "/vocab.bpe")))
    throw JobError("hyperparameters.tokenizer",
                   "\"" + job.tokenizer +
                       "\" is not byte, bpe, or a folder with encoder.json and vocab.bpe");
  if (!job.entry_is_program)
    hp.rejectUnknown(); // a user program may take keys of its own

  job.output_dir = top.string("output_dir").value_or("runs/" + job.entry_point);
  checkOutputDir(job.output_dir);
  std::optional<std::string> dataset = top.string("dataset");
  if (job.entry_is_program) {
    job.dataset = dataset.value_or("");
  } else if (job.language_model) {
    if (!dataset)
      throw JobError("dataset", "is required for " + job.entry_point +
                                    ": a text file or folder, or a uint16 token file (.bin)");
    job.dataset = *dataset;
  } else {
    job.dataset = dataset.value_or("fashion-mnist");
  }
  if (!job.dataset.empty()) {
    std::string folder =
        job.dataset == "fashion-mnist" ? "/usr/share/datasets/fashion-mnist" : job.dataset;
    if (!exists(folder))
      throw JobError("dataset", "\"" + job.dataset + "\": " + folder + " does not exist" +
                                    (job.dataset == "fashion-mnist"
                                         ? " (install Debian's dataset-fashion-mnist package)"
                                         : ""));
    if (!job.language_model && !job.entry_is_program &&
        !exists(folder + "/train-images-idx3-ubyte.gz"))
      throw JobError("dataset", "\"" + job.dataset +
                                    "\" holds no train-images-idx3-ubyte.gz "
                                    "(an image classifier reads Fashion-MNIST's "
                                    "IDX files)");
  }
  top.rejectUnknown();

  // Data parallelism: processes_per_host workers on each of instance_count
  // machines (Note [Data-parallel jobs] in Train.cpp). Never fewer
  // processes than the job asked for, silently.
  job.processes_per_host = perHost.value_or(std::max<int64_t>(job.n_gpus, 1));
  if (!job.distribution_enabled) {
    if (perHost && *perHost > 1)
      throw JobError("distribution.processes_per_host",
                     "is " + std::to_string(*perHost) +
                         " but distribution is not enabled (set distribution.enabled)");
    if (job.instance_count > 1)
      throw JobError("instance_count", "is " + std::to_string(job.instance_count) +
                                           ": training on several machines needs distribution "
                                           "enabled (distribution.enabled)");
    if (job.n_gpus > 1)
      throw JobError("n_gpus", "is " + std::to_string(job.n_gpus) +
                                   ": one process per GPU needs distribution enabled "
                                   "(distribution.enabled); or use 1 for cuda:0");
    job.processes_per_host = 1;
  }
  if (job.distribution_enabled && job.n_gpus > 0 && job.processes_per_host * job.instance_count > 1)
    throw JobError("n_gpus", "is " + std::to_string(job.n_gpus) +
                                 ": data parallelism between GPUs needs NCCL, which this build "
                                 "does not use yet; train data-parallel on CPU processes "
                                 "(n_gpus 0, distribution.processes_per_host N)");

  job.resolved = {
      {"entry_point", job.entry_point},
      {"instance_count", job.instance_count},
      {"n_gpus", job.n_gpus},
      {"compiler_config",
       {{"enabled", job.compiler_enabled},
        {"debug", job.compiler_debug},
        {"allow_fallback", job.allow_fallback},
        {"check_numerics", job.check_numerics},
        {"allow_tf32", job.allow_tf32}}},
      {"distribution",
       {{"enabled", job.distribution_enabled}, {"processes_per_host", job.processes_per_host}}},
      {"dataset", job.dataset},
      {"output_dir", job.output_dir},
      {"hyperparameters", job.hyperparameters},
  };
  return job;
}

} // namespace sinter::tools
