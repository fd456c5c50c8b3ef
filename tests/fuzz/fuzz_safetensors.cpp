//===- fuzz_safetensors.cpp - checkpoints and optimizer state ------------===//
//
// Any bytes as a safetensors file, and its tensors as an Adam optimizer's
// state for two parameters (f32 [2] and [3], as the seed corpus holds):
// loaded, or refused with a sinter::Error.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "sinter/sinter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sinter;
  fuzz::InputFile file(fuzz::bytesOf(data, size), "checkpoint.safetensors");
  try {
    io::SafetensorsFile loaded = io::load_safetensors(file.path());
    for (const auto &[name, tensor] : loaded.tensors)
      (void)tensor.numel();
    std::vector<Tensor> parameters = {zeros({2}), zeros({3})};
    optim::Adam adam(parameters);
    optim::Optimizer::State state(loaded.tensors.begin(), loaded.tensors.end());
    adam.load_state_dict(state);
  } catch (const Error &) {
  }
  return 0;
}
