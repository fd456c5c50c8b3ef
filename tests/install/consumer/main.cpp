// Uses the installed Sinter as an outside project would: the C++ API to train
// a small model with the compiler installed, and the runtime alone to ask for
// devices.
#include <sinter/Compiler/StepCompiler.h>
#include <sinter/runtime/CudaDriver.h>
#include <sinter/sinter.h>

#include <cstdio>

int main() {
  namespace F = sinter::nn::functional;
  std::printf("Sinter %s, best device %s, %d CUDA device(s)\n", sinter::kVersion,
              sinter::Device::best().toString().c_str(), sinter::cuda::deviceCount());

  // Steps run compiled once the compiler is in; a session that refuses
  // fallbacks makes sure that each one is.
  sinter::compiler::install();
  sinter::Settings settings = sinter::Settings::fromEnvironment();
  settings.compiler.allow_fallback = false;
  sinter::Session::Use session(settings);

  // A training loop with the public names: XOR with a two-layer MLP.
  sinter::manual_seed(3);
  auto model = sinter::models::mlp({.in_features = 2, .hidden = {16}, .num_classes = 2});
  sinter::optim::Adam adam(model->parameters(), {.lr = 0.05});
  sinter::Tensor x = sinter::from_vector<float>({0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  sinter::Tensor y = sinter::from_vector<int64_t>({0, 1, 1, 0}, {4});
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    adam.zero_grad();
    sinter::Tensor loss = F::cross_entropy((*model)(x), y);
    loss.backward();
    adam.step();
    sinter::mark_step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  sinter::Metrics metrics = sinter::metrics();
  std::printf("loss %.4f -> %.4f, %lld of %lld steps compiled on %s\n", first, last,
              static_cast<long long>(metrics.compiled_steps),
              static_cast<long long>(metrics.steps), x.device().toString().c_str());
  if (!(last < 0.05 * first) || metrics.compiled_steps != metrics.steps || metrics.steps < 150)
    return 1;

  try {
    sinter::Device::parse("tpu");
  } catch (const sinter::Error &error) {
    std::printf("caught: %s\n", error.what());
    return 0;
  }
  return 1;
}
