//===- fuzz_checkpoint.cpp - sinter-train's --resume readers ----------------===//
//
// Any bytes as a checkpoint that `sinter-train --resume` reads
// (loadCheckpoint: its metadata, the model's tensors, the optimizer's state,
// or an artifact session's state) into a small model of a fixed job, and as
// the metrics log a resumed job keeps the rows of (keptMetricsRows). A
// refusal is a JobError or a sinter::Error naming the problem; anything else
// (another exception, a crash, a sanitizer report) is a bug.
//
//===----------------------------------------------------------------------===//
#include "Checkpoint.h"
#include "FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sinter;
  // The reference executor computes the restored values: no compiler here.
  static Session::Use reference({.compiler = {.use_reference = true}});
  std::string_view bytes = fuzz::bytesOf(data, size);
  (void)tools::keptMetricsRows(std::string(bytes), 5);

  tools::Job job;
  job.entry_point = "tiny";
  job.dataset = "tiny data";
  job.gradient_accumulation_steps = 1;
  manual_seed(1);
  nn::Linear model(3, 2);
  optim::AdamW optimizer(model.parameters(), {.lr = 1e-3});
  optim::WarmupCosine schedule(optimizer, 2, 11, 1e-4);
  fuzz::InputFile file(bytes, "checkpoint.safetensors");
  try {
    tools::Position at = tools::loadCheckpoint(file.path(), job, /*batchSize=*/4, /*total=*/10,
                                               /*perEpoch=*/5, model, optimizer, schedule,
                                               "8:0000beef");
    // What a resumed run reads next: the parameters and the state.
    (void)at;
    for (const Tensor &p : model.parameters())
      (void)p.to_vector<float>();
    for (const auto &[name, tensor] : optimizer.state_dict())
      (void)tensor.to_vector<double>();
  } catch (const tools::JobError &) {
  } catch (const sinter::Error &) {
  }
  return 0;
}
