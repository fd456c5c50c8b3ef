//===- Checkpoint.cpp - a training job's checkpoints and metrics rows -----===//
#include "Checkpoint.h"

#include "ZooTask.h"

#include "sinter/runtime/StepSession.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace sinter::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Version 2 added the data's fingerprint and the count of optimizer tensors.
constexpr const char *kCheckpointFormat = "sinter-train-checkpoint/2";

} // namespace

/// What a checkpoint records of the data it was trained on, so that --resume
/// refuses other data of the same shapes (the run would not continue, it
/// would silently become another one): the example count and the CRC-32 of
/// up to 4096 examples spread evenly over the set (inputs and targets), as
/// "<count>:<crc as 8 hex digits>". Sampling keeps it cheap for any size
/// (Fashion-MNIST: 12 MiB of 188); a change to examples between the samples
/// goes unseen.
std::string dataFingerprint(const data::Dataset &dataset) {
  const int64_t count = dataset.size();
  const int64_t samples = std::min<int64_t>(count, 4096);
  std::vector<unsigned char> input(static_cast<size_t>(numel(dataset.input_shape())) *
                                   elementSize(dataset.input_dtype())),
      target(static_cast<size_t>(numel(dataset.target_shape())) *
             elementSize(dataset.target_dtype()));
  uLong crc = crc32_z(0, nullptr, 0);
  for (int64_t i = 0; i < samples; ++i) {
    dataset.get(i * count / samples, input.data(), target.data());
    crc = crc32_z(crc, input.data(), input.size());
    crc = crc32_z(crc, target.data(), target.size());
  }
  char text[48];
  std::snprintf(text, sizeof text, "%lld:%08lx", static_cast<long long>(count),
                static_cast<unsigned long>(crc));
  return text;
}

/// `state`: the optimizer's state_dict(), which every rank takes (a
/// sharded optimizer gathers it).
void saveCheckpoint(const std::string &path, const Job &job, int64_t batchSize, int64_t total,
                    nn::Module &model, const optim::Optimizer::State &state,
                    const optim::LRScheduler &schedule, const Position &at,
                    const std::string &data) {
  io::NamedTensors tensors = modelTensors(model);
  for (const auto &[name, s] : state)
    tensors.emplace_back("optimizer." + name, s);
  RngState rng = get_rng_state();
  std::map<std::string, std::string> metadata = {
      {"format", kCheckpointFormat},
      {"entry_point", job.entry_point},
      {"batch_size", std::to_string(batchSize)},
      {"gradient_accumulation_steps", std::to_string(job.gradient_accumulation_steps)},
      {"total_steps", std::to_string(total)},
      {"data", data},
      {"optimizer_tensors", std::to_string(state.size())},
      {"step", std::to_string(at.step)},
      {"epoch", std::to_string(at.epoch)},
      {"batch_in_epoch", std::to_string(at.batch)},
      {"rng_seed", std::to_string(rng.seed)},
      {"rng_stream", std::to_string(rng.stream)},
      {"schedule_step", std::to_string(schedule.last_step())},
      {"job", job.resolved.dump()},
  };
  io::save_safetensors(path, tensors, metadata);
}

/// Restores a checkpoint into the model, optimizer and schedule; returns
/// where the run continues. Throws JobError for one of another job.
///
/// It also takes the state an artifact's training session saved
/// (sinter_session_save: runtime::kSessionCheckpointFormat, from an
/// artifact of this job's model): the parameters and AdamW's moments at the
/// session's step count. Such a file says nothing of the data, the batch or
/// the random state, so the run continues at that step of this job's own
/// data order and schedule, and saves its checkpoints in output_dir.
Position loadCheckpoint(const std::string &path, const Job &job, int64_t batchSize, int64_t total,
                        int64_t perEpoch, nn::Module &model, optim::Optimizer &optimizer,
                        optim::LRScheduler &schedule, const std::string &data) {
  if (!fs::exists(path))
    throw JobError("--resume", "no checkpoint at " + path);
  io::SafetensorsFile file = io::load_safetensors(path);
  auto meta = [&](const std::string &key) -> const std::string & {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end())
      throw JobError(path, "not a sinter-train checkpoint (no \"" + key + "\" in its metadata)");
    return it->second;
  };
  const bool fromSession = meta("format") == runtime::kSessionCheckpointFormat;
  if (!fromSession && meta("format") != kCheckpointFormat)
    throw JobError(path, "checkpoint format \"" + meta("format") + "\", expected " +
                             kCheckpointFormat + " (or an artifact session's " +
                             runtime::kSessionCheckpointFormat + ")");
  auto mustMatch = [&](const std::string &key, const std::string &ours) {
    if (meta(key) != ours)
      throw JobError("--resume", "the checkpoint " + path + " has " + key + " " + meta(key) +
                                     ", this job " + ours);
  };
  if (fromSession) {
    if (!file.metadata.count("model"))
      throw JobError(path, "is the state of an artifact of your own step (its metadata names no "
                           "zoo model); sinter-train resumes only from a zoo model's artifact");
    mustMatch("model", job.entry_point);
  } else {
    mustMatch("entry_point", job.entry_point);
    mustMatch("batch_size", std::to_string(batchSize));
    if (!file.metadata.count("gradient_accumulation_steps")) // written before it existed
      file.metadata["gradient_accumulation_steps"] = "1";
    mustMatch("gradient_accumulation_steps", std::to_string(job.gradient_accumulation_steps));
    mustMatch("total_steps", std::to_string(total));
  }
  if (!fromSession && meta("data") != data)
    throw JobError("--resume", "the checkpoint " + path +
                                   " was trained on other data than this "
                                   "job's " +
                                   job.dataset + " (examples and CRC-32 of a sample: " +
                                   meta("data") + ", this job's " + data + ")");
  // Every tensor must be the model's or the optimizer's, as PyTorch's strict
  // load_state_dict wants: a stray one means another model's file.
  io::NamedTensors modelState = modelTensors(model);
  std::set<std::string> ours;
  for (const auto &[name, tensor] : modelState)
    ours.insert(name);
  int64_t optimizerTensors = 0;
  for (const auto &[name, tensor] : file.tensors) {
    if (name.rfind("optimizer.", 0) == 0)
      ++optimizerTensors;
    else if (!ours.count(name))
      throw JobError(path, "holds a tensor '" + name + "' that is no parameter or buffer of " +
                               job.entry_point + " (model.*) nor optimizer state (optimizer.*)");
  }
  {
    NoGradGuard noGrad;
    for (auto &[name, into] : modelState) {
      const Tensor &saved = file.at(name);
      if (saved.shape() != into.shape() || saved.dtype() != into.dtype())
        throw JobError(path, name + " is " + toString(saved.shape()) + " " +
                                 std::string(sinter::name(saved.dtype())) + ", the model's " +
                                 toString(into.shape()) + " " +
                                 std::string(sinter::name(into.dtype())));
      into.copy_(saved);
    }
  }
  // A count of the optimizer's tensors that the metadata does not promise is a
  // file whose state was cut (Adam would silently restart its moments).
  if (!fromSession) {
    auto recorded = meta("optimizer_tensors");
    if (recorded != std::to_string(optimizerTensors))
      throw JobError(path, "holds " + std::to_string(optimizerTensors) +
                               " optimizer tensors, its metadata \"optimizer_tensors\" says " +
                               recorded);
  }
  // Counts in the metadata: whole decimal numbers, nothing else.
  auto count = [&]<typename T>(const std::string &key, T) -> T {
    const std::string &text = meta(key);
    T value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
      throw JobError(path, "metadata \"" + key + "\" is \"" + text + "\", not a count");
    return value;
  };
  const int64_t step = count("step", int64_t());
  if (step < 0 || step > total)
    throw JobError(path, "metadata \"step\" is " + std::to_string(step) +
                             ", outside this job's 0.." + std::to_string(total));
  optim::Optimizer::State state;
  for (const auto &[name, tensor] : file.tensors)
    if (name.rfind("optimizer.", 0) == 0)
      state.emplace_back(name.substr(10), tensor);
  if (fromSession) {
    // A session counts steps once for all parameters (the step scalars'
    // t); AdamW keeps a count per parameter. At step 0 the moments are the
    // fresh optimizer's.
    if (optimizerTensors == 0 && step > 0)
      throw JobError(path, "holds no optimizer state (optimizer.*) at step " +
                               std::to_string(step) + ": is it a predict session's?");
    if (step == 0)
      state.clear();
    std::set<std::string> counted;
    for (size_t i = 0, n = state.size(); i < n; ++i) {
      std::string index = state[i].first.substr(0, state[i].first.find('.'));
      if (counted.insert(index).second)
        state.emplace_back(index + ".step", from_vector<int64_t>({step}, {}));
    }
  }
  try {
    optimizer.load_state_dict(state);
  } catch (const sinter::Error &error) {
    throw JobError(path, "its optimizer state: " + error.message());
  }
  mark_step(); // the restored values, computed once
  if (fromSession) {
    schedule.set_last_step(step);
    return {step, step / perEpoch, step % perEpoch, true};
  }
  Position at{step, count("epoch", int64_t()), count("batch_in_epoch", int64_t())};
  schedule.set_last_step(count("schedule_step", int64_t()));
  set_rng_state({count("rng_seed", uint64_t()), count("rng_stream", uint64_t())});
  return at;
}

std::string keptMetricsRows(const std::string &text, int64_t keepUpTo) {
  std::string kept;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    json row = json::parse(line, nullptr, false);
    if (row.is_object() && row.contains("step") && row["step"].is_number_integer() &&
        row["step"].get<int64_t>() <= keepUpTo)
      kept += line + "\n";
  }
  return kept;
}

} // namespace sinter::tools
