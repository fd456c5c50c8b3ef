//===- CudaStepTest.cpp - whole training steps on the CUDA simulator -------===//
//
// A zoo model's training step (forward, loss, backward, SGD with momentum)
// compiled for the CUDA target (Note [The CUDA target]) and run by
// runtime::CudaExecutable on the simulated CUDA device (Note [The CUDA
// device interface]), against the same step compiled for the CPU and run
// by CpuExecutable on the same arguments: the loss within 1e-4 of itself,
// each updated parameter's change within 1e-3 of its largest change (the
// zoo tests' tolerances; the kernels sum in another order). With
// SINTER_CUDA_SIMULATOR=shuffled (cuda_step_tests.shuffled) every launch
// runs in the simulator's checking mode. And what the executable refuses
// or reports: a kernel that writes out of bounds, named with its launch.
//
//===----------------------------------------------------------------------===//
#include "ZooTraining.h"
#include "common/GpuRequired.h"
#include "common/HalfSteps.h"
#include "common/MlpStep.h"
#include "common/OpTableSteps.h"

#include "sinter/Codegen/CudaRenderer.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Compare.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/CudaDriver.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace {

using namespace sinter;

/// The step's results (raw bytes) run by the CPU's executable.
std::vector<std::vector<uint8_t>> runOnCpu(const runtime::Program &program,
                                           const std::vector<const void *> &arguments) {
  auto executable = runtime::CpuExecutable::load(program);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok())
    return {};
  std::vector<std::vector<uint8_t>> results;
  std::vector<void *> pointers;
  for (size_t i = 0; i < program.results.size(); ++i)
    results.emplace_back((*executable)->resultBytes(i));
  for (auto &bytes : results)
    pointers.push_back(bytes.data());
  // Donated results are written into their arguments: run on copies.
  std::vector<std::vector<uint8_t>> copies;
  std::vector<const void *> in;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const auto *bytes = static_cast<const uint8_t *>(arguments[i]);
    copies.emplace_back(bytes, bytes + (*executable)->argumentBytes(i));
  }
  for (auto &copy : copies)
    in.push_back(copy.data());
  for (size_t r = 0; r < program.results.size(); ++r)
    if (program.donors[r] >= 0)
      pointers[r] = copies[program.donors[r]].data();
  Status status = (*executable)->run(in, pointers);
  EXPECT_TRUE(status.ok()) << status;
  for (size_t r = 0; r < program.results.size(); ++r) {
    if (program.donors[r] >= 0 || (*executable)->resultInArena(r))
      std::memcpy(results[r].data(), pointers[r], results[r].size());
    if ((*executable)->resultInArena(r))
      runtime::HostAllocator::get().deallocate(pointers[r]);
  }
  return results;
}

std::vector<float> floats(const std::vector<uint8_t> &bytes) {
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

/// One step of `model` compiled for `target` and run on `device`, against
/// the CPU's.
void checkStep(const std::string &model, int64_t batch, int64_t length, int64_t image,
               const codegen::Target &target, runtime::CudaDevice &device, int splitKernels = 0) {
  compiler::install();
  tools::ZooTask task = tools::makeZooTask(model, batch, length, /*seed=*/3, image);
  std::vector<std::vector<float>> before;
  for (const Tensor &p : task.model->parameters())
    before.push_back(p.to_vector<float>());
  optim::SGD optimizer(task.model->parameters(), {.lr = 0.05, .momentum = 0.9});
  std::vector<lazy::NodePtr> outputs = tools::recordStep(task, &optimizer);
  ASSERT_EQ(outputs.size(), before.size() + 1);

  compiler::StepBuild cpu, cuda;
  std::string error;
  ASSERT_TRUE(compiler::compileStep(outputs, codegen::cpuTarget(), cpu, error)) << error;
  ASSERT_TRUE(compiler::compileStep(outputs, target, cuda, error)) << error;
  // Every kernel of the CUDA step has its launch shape; every buffer in its
  // arena is 256-byte aligned.
  int kernels = 0, withScratch = 0;
  for (const runtime::Program::Step &step : cuda.program.steps)
    if (step.kind == runtime::Program::Step::Kind::Kernel) {
      ++kernels;
      withScratch += static_cast<int>(step.outputs.size()) > step.results;
      EXPECT_EQ(step.shape.block[0], 256) << step.label;
      EXPECT_GE(step.shape.grid[0], 1) << step.label;
    }
  EXPECT_GE(kernels, 5);
  // Kernels whose column sums are split across blocks take their partials
  // in scratch buffers of the arena (Note [Split column reductions]).
  EXPECT_GE(withScratch, splitKernels);
  for (const runtime::Program::Buffer &buffer : cuda.program.buffers)
    if (buffer.offset >= 0) {
      EXPECT_EQ(buffer.offset % 256, 0);
    }

  std::vector<const void *> arguments;
  for (const lazy::Node *node : lazy::topological_order(outputs))
    if (node->op == lazy::Op::Data)
      arguments.push_back(node->value->bytes());
  std::vector<std::vector<uint8_t>> want = runOnCpu(cpu.program, arguments);
  ASSERT_EQ(want.size(), outputs.size());

  auto executable = runtime::CudaExecutable::load(cuda.program, device);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_EQ((*executable)->device().name(), "cuda:0");
  // One run into fresh result buffers.
  auto run = [&](std::vector<std::vector<uint8_t>> &results) {
    std::vector<void *> pointers;
    for (size_t i = 0; i < outputs.size(); ++i)
      results.emplace_back((*executable)->resultBytes(i));
    for (auto &bytes : results)
      pointers.push_back(bytes.data());
    return (*executable)->run(arguments, pointers);
  };
  std::vector<std::vector<uint8_t>> got, again;
  Status status = run(got);
  ASSERT_TRUE(status.ok()) << status;
  // Run again: the same bits (every reduction in a fixed order, and a split
  // reduction's counters back at 0 after the first run).
  status = run(again);
  ASSERT_TRUE(status.ok()) << status;
  for (size_t i = 0; i < outputs.size(); ++i)
    EXPECT_TRUE(again[i] == got[i]) << model << ": result " << i << " of a second run differs";

  Comparison loss = compare_values(model + " loss", floats(got[0]), floats(want[0]),
                                   {.of_largest = 1e-4, .absolute = 1e-6});
  EXPECT_TRUE(loss.ok) << loss.message;
  std::printf("CUDA %s  %s loss %.6f (CPU %.6f)\n",
              &device == &runtime::simulatedCudaDevice() ? "SIMULATED" : "GPU", model.c_str(),
              floats(got[0])[0], floats(want[0])[0]);
  for (size_t p = 0; p < before.size(); ++p) {
    std::vector<float> gotValues = floats(got[p + 1]), wantValues = floats(want[p + 1]);
    ASSERT_EQ(gotValues.size(), before[p].size());
    std::vector<double> gotChange(gotValues.size()), wantChange(gotValues.size());
    double size = 0;
    for (size_t k = 0; k < gotValues.size(); ++k) {
      gotChange[k] = double(gotValues[k]) - before[p][k];
      wantChange[k] = double(wantValues[k]) - before[p][k];
      size = std::max(size, std::fabs(double(before[p][k])));
    }
    Comparison moved =
        compare_values(model + " change of parameter " + std::to_string(p), gotChange, wantChange,
                       {.of_largest = 1e-3, .absolute = 5e-7 * size});
    EXPECT_TRUE(moved.ok) << moved.message;
  }
}

void checkSimulatedStep(const std::string &model, int64_t batch, int64_t length, int64_t image,
                        int splitKernels = 0) {
  checkStep(model, batch, length, image, codegen::cudaTarget(), runtime::simulatedCudaDevice(),
            splitKernels);
}

TEST(CudaStep, MLP) { checkSimulatedStep("mlp", 8, 8, 32); }
TEST(CudaStep, LeNet) { checkSimulatedStep("lenet", 4, 8, 32); }
// A batch of 256: the bias gradients' column sums over 256 rows are split
// across blocks, through the arena's scratch and the last block of each tile.
TEST(CudaStep, MLPWithSplitColumnSums) { checkSimulatedStep("mlp", 256, 8, 32, 2); }
TEST(CudaStep, GPTMini) { checkSimulatedStep("gpt-mini", 2, 16, 32); }
TEST(CudaStep, BERTMini) { checkSimulatedStep("bert-mini", 2, 16, 32); }
TEST(CudaStep, ResNet18) { checkSimulatedStep("resnet18", 2, 8, 16); }

// The same steps on a GPU, through the driver's device (Note [The driver's
// device] in runtime/lib/DriverDevice.cpp) and the CUDA target's cubins for
// its architecture. Without a GPU they skip, unless SINTER_EXPECT_CUDA=1.
void checkGpuStep(const std::string &model, int64_t batch, int64_t length, int64_t image) {
  StatusOr<runtime::CudaDevice *> gpu = runtime::driverCudaDevice(0);
  StatusOr<std::vector<cuda::DeviceInfo>> infos = cuda::listDevices();
  if (!gpu.ok() || !infos.ok()) {
    ASSERT_FALSE(test_support::gpuRequired()) << gpu.status();
    GTEST_SKIP() << "no GPU: " << gpu.status();
  }
  const cuda::DeviceInfo &info = infos->front();
  checkStep(model, batch, length, image,
            codegen::cudaTarget(info.computeCapabilityMajor * 10 + info.computeCapabilityMinor),
            **gpu);
}

TEST(CudaStepOnGpu, MLP) { checkGpuStep("mlp", 8, 8, 32); }
TEST(CudaStepOnGpu, LeNet) { checkGpuStep("lenet", 4, 8, 32); }
TEST(CudaStepOnGpu, GPTMini) { checkGpuStep("gpt-mini", 2, 16, 32); }
TEST(CudaStepOnGpu, BERTMini) { checkGpuStep("bert-mini", 2, 16, 32); }
TEST(CudaStepOnGpu, ResNet18) { checkGpuStep("resnet18", 2, 8, 16); }

/// The bytes of the file at `path`.
std::string fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// For a GPU the CUDA target compiles the step's kernels with NVRTC into a
// cubin for the architecture (Note [The CUDA target]): an ELF image for
// NVIDIA's machine with every kernel the Program launches, cached on disk
// per architecture, rebuilt when damaged. Needs NVRTC, not a GPU.
TEST(CudaTarget, BuildsAStepIntoACubinPerArchitecture) {
  if (!cuda::nvrtcVersion().ok()) {
    ASSERT_EQ(SINTER_EXPECT_NVRTC, 0) << cuda::nvrtcVersion().status();
    GTEST_SKIP() << cuda::nvrtcVersion().status();
  }
  compiler::install();
  tools::ZooTask task = tools::makeZooTask("mlp", 4, 8, /*seed=*/3, 32);
  optim::SGD optimizer(task.model->parameters(), {.lr = 0.05, .momentum = 0.9});
  std::vector<lazy::NodePtr> outputs = tools::recordStep(task, &optimizer);
  std::string paths[2];
  int arch = 0;
  for (int sm : {80, 90}) {
    compiler::StepBuild build;
    std::string error;
    ASSERT_TRUE(compiler::compileStep(outputs, codegen::cudaTarget(sm), build, error)) << error;
    const std::string &path = build.program.library;
    ASSERT_TRUE(path.ends_with(".cubin")) << path;
    std::string image = fileBytes(path);
    ASSERT_GT(image.size(), 64u);
    EXPECT_EQ(image.substr(0, 4), "\x7f"
                                  "ELF")
        << path;
    uint16_t machine = 0;
    std::memcpy(&machine, image.data() + 18, 2);
    EXPECT_EQ(machine, 190) << "e_machine of " << path << " is not EM_CUDA";
    int kernels = 0;
    for (const runtime::Program::Step &step : build.program.steps)
      if (step.kind == runtime::Program::Step::Kind::Kernel) {
        ++kernels;
        std::string name = build.program.kernelPrefix + std::to_string(step.kernel);
        EXPECT_NE(image.find(name + '\0'), std::string::npos) << name << " is not in " << path;
      }
    EXPECT_GE(kernels, 5);
    paths[arch++] = path;
    // Built once: the second compile finds it.
    compiler::StepBuild again;
    ASSERT_TRUE(compiler::compileStep(outputs, codegen::cudaTarget(sm), again, error)) << error;
    EXPECT_TRUE(again.cacheHit);
    EXPECT_EQ(again.program.library, path);
  }
  EXPECT_NE(paths[0], paths[1]);
  // A damaged entry is built again.
  std::string whole = fileBytes(paths[1]);
  std::ofstream(paths[1], std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  compiler::StepBuild rebuilt;
  std::string error;
  ASSERT_TRUE(compiler::compileStep(outputs, codegen::cudaTarget(90), rebuilt, error)) << error;
  EXPECT_FALSE(rebuilt.cacheHit);
  EXPECT_EQ(fileBytes(rebuilt.program.library), whole);
}

// The kernels of a step of f16 and bf16 values (their storage types and
// conversions, kernels/common/half.h) compile with NVRTC for both
// architectures, as the simulator's build of the same text runs them
// (CudaSession.HalfPrecisionValuesHaveTheReferencesBits).
TEST(CudaTarget, BuildsAStepOfHalfValues) {
  if (!cuda::nvrtcVersion().ok()) {
    ASSERT_EQ(SINTER_EXPECT_NVRTC, 0) << cuda::nvrtcVersion().status();
    GTEST_SKIP() << cuda::nvrtcVersion().status();
  }
  compiler::install();
  for (DType half : {DType::bf16, DType::f16}) {
    std::vector<lazy::NodePtr> outputs;
    for (const Tensor &t : test_support::halfPrecisionStep(half))
      outputs.push_back(lazy::node_of(t));
    for (int sm : {80, 90}) {
      compiler::StepBuild build;
      std::string error;
      ASSERT_TRUE(compiler::compileStep(outputs, codegen::cudaTarget(sm), build, error))
          << name(half) << " sm_" << sm << ": " << error;
      EXPECT_TRUE(build.program.library.ends_with(".cubin")) << build.program.library;
      EXPECT_GE(build.kernels, 3) << name(half);
    }
  }
}

// Without a GPU and without the simulator, a step on a CUDA device is
// refused naming what is missing (here: the driver).
TEST(CudaTarget, WithoutAGpuTheReasonIsNamed) {
  if (runtime::environment().cuda_simulator || cuda::deviceCount() > 0)
    GTEST_SKIP() << "the simulator or a GPU stands for the device here";
  StatusOr<const codegen::Target *> target = codegen::targetFor(runtime::DeviceKind::Cuda);
  ASSERT_FALSE(target.ok());
  std::string message(target.status().message());
  EXPECT_NE(message.find("steps on a GPU need one: no CUDA device"), std::string::npos) << message;
  EXPECT_NE(message.find("SINTER_CUDA_SIMULATOR=1"), std::string::npos) << message;
}

/// A Program of one hand-written kernel `kernel0` over `elements` floats:
/// out = in + 1, or (outOfBounds) also one float past its end.
runtime::Program oneKernel(int64_t elements, bool outOfBounds) {
  // Written, with its simulator entry, as the CUDA renderer writes kernels.
  std::string n = std::to_string(elements);
  std::string source =
      codegen::cudaKernelPrologue() +
      codegen::cudaKernelText(
          "kernel0", {"const float *in0", "float *out0"},
          {"static_cast<const float *>(buffers[0])", "static_cast<float *>(buffers[1])"},
          "  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
          "  if (i < " +
              n + ") out0[i] = in0[i] + 1.0f;\n" +
              (outOfBounds ? "  if (i == 0) out0[" + n + "] = 0.0f;\n" : ""),
          /*fibers=*/false);
  codegen::CompiledLibrary library;
  std::string error;
  EXPECT_TRUE(codegen::compileHostLibrary("#include \"cpu/kernel.h\"\n" + source, library, error,
                                          codegen::HostBuild{.simulatedCuda = true}))
      << error;
  runtime::Program program;
  program.buffers = {{elements * 4}, {elements * 4, 0}};
  program.arguments = {0};
  program.results = {1};
  program.donors = {-1};
  program.arenaBytes = elements * 4;
  program.library = library.path;
  program.kernelPrefix = "kernel";
  runtime::Program::Step step;
  step.kernel = 0;
  step.inputs = {0};
  step.outputs = {1};
  step.results = 1;
  step.label = "add_one <- model.cpp:12";
  step.shape = {.grid = {(elements + 127) / 128, 1, 1}, .block = {128, 1, 1}};
  program.steps = {step};
  program.signature.arguments = {{.name = "x", .shape = {elements}}};
  program.signature.results = {
      {.name = "y", .role = runtime::Program::Role::Output, .shape = {elements}}};
  return program;
}

TEST(CudaExecutable, RunsAKernelAndNamesTheLaunchThatWritesOutOfBounds) {
  std::vector<float> x(300), y(300, -1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i);
  auto good = runtime::CudaExecutable::load(oneKernel(300, false), runtime::simulatedCudaDevice());
  ASSERT_TRUE(good.ok()) << good.status();
  ASSERT_TRUE((*good)->run({x.data()}, {y.data()}).ok());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(y[i], x[i] + 1.0f) << "element " << i;
  // The wrong number of arguments or results is refused before anything runs.
  Status few = (*good)->run({}, {y.data()});
  EXPECT_EQ(few.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(few.message()).find("takes 1 arguments, got 0"), std::string::npos) << few;

  auto bad = runtime::CudaExecutable::load(oneKernel(300, true), runtime::simulatedCudaDevice());
  ASSERT_TRUE(bad.ok()) << bad.status();
  Status status = (*bad)->run({x.data()}, {y.data()});
  ASSERT_FALSE(status.ok());
  std::string message(status.message());
  EXPECT_NE(message.find("launch 0 of 1 (add_one <- model.cpp:12) on cuda:0 failed"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("kernel"), std::string::npos) << message;
}

TEST(CudaExecutable, ALibraryWithoutTheKernelIsRefused) {
  runtime::Program program = oneKernel(8, false);
  program.kernelPrefix = "other";
  auto refused = runtime::CudaExecutable::load(program, runtime::simulatedCudaDevice());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("has no kernel other0"), std::string::npos)
      << refused.status();
  program.library = "/nonexistent/kernels.so";
  refused = runtime::CudaExecutable::load(program, runtime::simulatedCudaDevice());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message())
                .find("cannot load the kernel library /nonexistent/kernels.so on cuda:0"),
            std::string::npos)
      << refused.status();
}

// With SINTER_CUDA_SIMULATOR=1 (cuda_step_tests.session): a session on
// cuda:0 trains on the simulated CUDA device, compiled and eagerly, with
// the CPU's results.
void checkTraining(const std::string &model, bool compiled, int64_t batch, int64_t length,
                   int64_t image = 32) {
  ASSERT_TRUE(runtime::environment().cuda_simulator)
      << "run with SINTER_CUDA_SIMULATOR=1 (ctest: cuda_step_tests.session)";
  CompilerConfig config{.enabled = compiled};
  zoo::ZooRun cpu = zoo::trainThreeSteps(model, {.compiler = config}, batch, length, image);
  zoo::ZooRun cuda = zoo::trainThreeSteps(model, {.device = Device::cuda(0), .compiler = config},
                                          batch, length, image);
  Metrics m = metrics();
  EXPECT_EQ(m.fallbacks, 0) << metrics_report();
  EXPECT_EQ(compiled ? m.compiled_steps : m.eager_steps, m.steps) << metrics_report();
  zoo::expectSameTraining(model + (compiled ? " compiled" : " eager") + " on cuda:0", cuda, cpu);
}

TEST(CudaSession, MLPTrainsCompiledAndEagerly) {
  checkTraining("mlp", true, 8, 8);
  checkTraining("mlp", false, 8, 8);
}

TEST(CudaSession, GPTMiniTrainsCompiled) { checkTraining("gpt-mini", true, 2, 16); }
TEST(CudaSession, LeNetTrainsCompiled) { checkTraining("lenet", true, 4, 8); }
TEST(CudaSession, BERTMiniTrainsCompiled) { checkTraining("bert-mini", true, 2, 16); }
// 16x16 images, as ZooSteps.ResNet18 (batch norm over a 1x1 map of two
// images is too ill-conditioned to compare).
TEST(CudaSession, ResNet18TrainsCompiled) { checkTraining("resnet18", true, 2, 8, 16); }

TEST(CudaSession, TensorsMoveBetweenDevicesAndOneStepStaysOnOne) {
  compiler::install();
  Session::Use session({.device = Device::cuda(0)});
  Tensor x = arange(6).to(DType::f32).reshape({2, 3});
  EXPECT_EQ(x.device(), Device::cuda(0));
  Tensor onCpu = (x * 2.0).to(Device::cpu());
  EXPECT_EQ(onCpu.device(), Device::cpu());
  EXPECT_EQ(onCpu.to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  Tensor back = onCpu.to(Device::cuda(0));
  EXPECT_EQ(back.device(), Device::cuda(0));
  EXPECT_EQ((back + x).to_vector<float>(), (std::vector<float>{0, 3, 6, 9, 12, 15}));
  // A step over both devices is refused, naming them.
  std::string message;
  try {
    (x + onCpu).to_vector<float>();
  } catch (const Error &error) {
    message = error.message();
  }
  EXPECT_NE(message.find("cuda:0"), std::string::npos) << message;
  EXPECT_NE(message.find("cpu"), std::string::npos) << message;
  // The simulator is one device; numerics are checked on the CPU only.
  for (auto settings : {Settings{.device = Device::cuda(1)},
                        Settings{.device = Device::cuda(0), .compiler = {.check_numerics = 1}}}) {
    std::string refused;
    try {
      Session s(settings);
    } catch (const Error &error) {
      refused = error.message();
    }
    EXPECT_NE(refused.find(settings.device.index() == 1 ? "the CUDA simulator "
                                                          "(SINTER_CUDA_SIMULATOR) has one device"
                                                        : "numerics are checked on the CPU only"),
              std::string::npos)
        << refused;
  }
}

// A model's parameters and optimizer state stay in the device's memory
// from step to step (Note [Two forms of a value] in sinter/lazy/Node.h):
// after the first step (which initializes them there) a step copies only
// its scalars in and nothing out until the host reads a value; its updates
// are written over their old values (Note [Donation]), so its memory is the
// plan's, byte for byte.
TEST(CudaSession, ShortRowsShareAWarp) {
  // Note [Row kernels on the GPU]: rows of 16 columns or fewer take 16, 8,
  // 4, 2 or 1 lanes each, several rows to a warp; row counts that leave the
  // last warp partly empty, whose lanes still take part in every shuffle.
  compiler::install();
  auto record = [] {
    std::vector<Tensor> outputs;
    for (auto [rows, cols] :
         {std::pair<int64_t, int64_t>{7, 10}, {5, 3}, {3, 1}, {33, 16}, {9, 5}}) {
      std::vector<float> values;
      for (int64_t k = 0; k < rows * cols; ++k)
        values.push_back(static_cast<float>(std::sin(0.7 * static_cast<double>(k + cols)) * 3));
      Tensor x = from_vector<float>(values, {rows, cols});
      outputs.push_back(nn::functional::softmax(x, -1));
      outputs.push_back(x.amax({1}));
      outputs.push_back(x - x.sum({1}, /*keepdim=*/true) / static_cast<double>(cols));
    }
    return outputs;
  };
  std::vector<std::vector<float>> expected;
  {
    reference::ReferenceGuard oracle;
    for (const Tensor &t : record())
      expected.push_back(t.to_vector<float>());
  }
  Session::Use use({.device = Device::cuda(0), .compiler = {.allow_fallback = false}});
  std::vector<Tensor> results = record();
  mark_step();
  for (size_t k = 0; k < results.size(); ++k) {
    Comparison c = compare_values("result " + std::to_string(k), results[k].to_vector<float>(),
                                  expected[k], {.of_largest = 1e-6, .absolute = 1e-7});
    EXPECT_TRUE(c.ok) << c.message;
  }
}

TEST(CudaSession, ChannelStatisticsSplitAcrossBlocksAreTheSameRunAfterRun) {
  // Note [Split column reductions]: per channel of [8, 4, 32, 32], 8192
  // elements in 8 splits, each a block; the mean and the inverse standard
  // deviation as a batch norm takes them, computed at each channel by the
  // last block of its splits. Twice, to the bit: the order is fixed and
  // the arrival counters are back at zero after each launch.
  compiler::install();
  std::vector<float> values;
  for (int64_t k = 0; k < 8 * 4 * 32 * 32; ++k)
    values.push_back(static_cast<float>(std::sin(0.37 * static_cast<double>(k)) * 2 + k % 4));
  auto record = [&] {
    Tensor x = from_vector<float>(values, {8, 4, 32, 32});
    Tensor mean = x.mean({0, 2, 3});
    Tensor meanOfSquares = (x * x).mean({0, 2, 3});
    Tensor inverse = rsqrt(meanOfSquares - mean * mean + 1e-5);
    return std::vector<Tensor>{mean, inverse};
  };
  std::vector<std::vector<float>> expected;
  {
    reference::ReferenceGuard oracle;
    for (const Tensor &t : record())
      expected.push_back(t.to_vector<float>());
  }
  Session::Use use({.device = Device::cuda(0), .compiler = {.allow_fallback = false}});
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 2; ++run) {
    std::vector<Tensor> results = record();
    mark_step();
    for (size_t k = 0; k < results.size(); ++k) {
      std::vector<float> got = results[k].to_vector<float>();
      Comparison c =
          compare_values("result " + std::to_string(k), got, expected[k], {.of_largest = 1e-5});
      EXPECT_TRUE(c.ok) << c.message;
      if (run == 0)
        first.push_back(got);
      else
        EXPECT_EQ(std::memcmp(got.data(), first[k].data(), got.size() * sizeof(float)), 0)
            << "result " << k << " differs from the first run's";
    }
  }
}

TEST(CudaSession, HalfPrecisionValuesHaveTheReferencesBits) {
  // The CPU's bits (CompiledStep.HalfPrecisionValuesHaveTheReferencesBits):
  // the conversions are the same text on both (kernels/common/half.h).
  compiler::install();
  for (DType half : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(name(half));
    std::vector<std::vector<double>> expected = test_support::halfStepOnTheReference(half);
    Session::Use use({.device = Device::cuda(0), .compiler = {.allow_fallback = false}});
    std::vector<Tensor> results = test_support::halfPrecisionStep(half);
    mark_step();
    ASSERT_EQ(results[0].device(), Device::cuda(0));
    test_support::expectHalfStepBits(results, expected);
  }
}

TEST(CudaSession, EveryRowOfTheOpTableIsTheReferences) {
  // The CUDA renderer's column of each row (Note [The op table]), on every
  // dtype the row takes, against the reference executor.
  compiler::install();
  std::vector<std::vector<double>> expected = test_support::opTableStepOnTheReference();
  Session::Use use({.device = Device::cuda(0), .compiler = {.allow_fallback = false}});
  std::vector<test_support::TableResult> results = test_support::opTableStep();
  mark_step();
  ASSERT_FALSE(results.empty());
  ASSERT_EQ(results[0].value.device(), Device::cuda(0));
  test_support::expectOpTableStep(results, expected);
}

TEST(CudaSession, PointwiseLoopsOfSixteenBytesAThreadReadBuffersAtAnyOffset) {
  // Note [Vector loads]: 4099 elements (f32: 4 a thread; bf16: 8; the last
  // few one a thread), read from the start of a buffer (aligned: the vector
  // form) and from a view one element into it (not aligned: one element a
  // thread), compiled into steps of their own: the reference's bits.
  compiler::install();
  std::vector<float> values(4100);
  for (size_t k = 0; k < values.size(); ++k)
    values[k] = static_cast<float>(k % 97) * 0.25f - 12.0f;
  for (DType dtype : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(name(dtype));
    auto steps = [&] {
      Tensor x = from_vector<float>(values, {4100}).to(dtype);
      mark_step(); // x is data: the steps below read it as an input
      std::vector<Tensor> results;
      results.push_back(x.slice(0, 0, 4099) * 3.0 - 1.0);
      mark_step();
      results.push_back(x.slice(0, 1, 4100) * 2.0 + x.slice(0, 0, 4099));
      mark_step();
      return results;
    };
    std::vector<std::vector<double>> expected;
    {
      reference::ReferenceGuard oracle;
      for (const Tensor &t : steps())
        expected.push_back(t.to_vector<double>());
    }
    Session::Use use({.device = Device::cuda(0), .compiler = {.allow_fallback = false}});
    std::vector<Tensor> results = steps();
    ASSERT_EQ(results[0].device(), Device::cuda(0));
    for (size_t k = 0; k < results.size(); ++k)
      test_support::expectSameBits("result " + std::to_string(k), results[k].to_vector<double>(),
                                   expected[k]);
  }
}

TEST(CudaSession, ParametersStayOnTheDeviceFromStepToStep) {
  ASSERT_TRUE(runtime::environment().cuda_simulator)
      << "run with SINTER_CUDA_SIMULATOR=1 (ctest: cuda_step_tests.session)";
  compiler::install();
  Session::Use use({.device = Device::cuda(0), .compiler = {.allow_fallback = false}});
  using test_support::MlpStep;
  MlpStep mlp(2, 16, MlpStep::Optimizer::AdamW);
  int64_t parameterBytes = 0;
  for (const Tensor &p : mlp.model->parameters())
    parameterBytes += p.numel() * 4;
  auto step = [&] {
    Tensor loss = mlp.record();
    mark_step();
    return loss;
  };
  absl::StatusOr<runtime::CudaDevice *> device = runtime::cudaDevice(0);
  ASSERT_TRUE(device.ok()) << device.status();
  Tensor first = step();
  runtime::CudaDevice::Traffic before = (*device)->traffic();
  constexpr int kSteps = 3;
  Tensor loss;
  for (int k = 0; k < kSteps; ++k)
    loss = step();
  runtime::CudaDevice::Traffic after = (*device)->traffic();
  int64_t perStep = (after.toDevice - before.toDevice) / kSteps;
  EXPECT_LT(perStep, parameterBytes / 100)
      << perStep << " bytes copied to the device per step; the parameters are " << parameterBytes;
  EXPECT_EQ(after.toHost, before.toHost) << "nothing is read back until it is asked for";
  StepMemory memory = metrics().last_step_memory;
  EXPECT_EQ(memory.measured_peak_bytes, memory.planned_peak_bytes)
      << "arena " << memory.arena_bytes << ", results " << memory.result_bytes << ", donated "
      << memory.donated_bytes;
  float last = loss.item<float>();
  EXPECT_EQ((*device)->traffic().toHost - after.toHost, 4) << "the loss, read";
  EXPECT_LT(last, first.item<float>()) << "four AdamW steps on one batch";
  // What the host reads is the CPU's training, to the simulator tests'
  // tolerance (the CPU session from the same seed).
  std::vector<float> weight = mlp.model->parameters().front().to_vector<float>();
  Session::Use onCpu({.compiler = {.allow_fallback = false}});
  MlpStep cpu(2, 16, MlpStep::Optimizer::AdamW);
  for (int k = 0; k < kSteps + 1; ++k) {
    cpu.record();
    mark_step();
  }
  std::vector<float> cpuWeight = cpu.model->parameters().front().to_vector<float>();
  ASSERT_EQ(weight.size(), cpuWeight.size());
  for (size_t i = 0; i < weight.size(); ++i)
    ASSERT_NEAR(weight[i], cpuWeight[i], 1e-5) << i;
}

} // namespace

// A step on a CUDA device is held to the memory limit as a whole (the
// device's memory, not the host's), and refused before it runs.
TEST(CudaSession, AStepOverTheMemoryLimitIsRefusedBeforeItRuns) {
  ASSERT_TRUE(runtime::environment().cuda_simulator)
      << "run with SINTER_CUDA_SIMULATOR=1 (ctest: cuda_step_tests.session)";
  compiler::install();
  Settings settings{.device = Device::cuda(0), .compiler = {.allow_fallback = false}};
  Session::Use use(settings);
  test_support::MlpStep mlp(1, 32, test_support::MlpStep::Optimizer::Sgd);
  mark_step();
  Tensor loss = mlp.record();
  StepMemory planned = plan_step();
  ASSERT_GT(planned.planned_peak_bytes, 0);
  Metrics before = metrics();
  Settings limited = settings;
  limited.compiler.memory_limit = planned.planned_peak_bytes - 1;
  try {
    Session(limited).mark_step();
    ADD_FAILURE() << "a step over the limit ran";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("CudaStepTest.cpp"), std::string::npos) << message;
    EXPECT_NE(message.find("under the memory limit (CompilerConfig::memory_limit, "
                           "SINTER_MEMORY_LIMIT); nothing was run"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(metrics().compiled_steps, before.compiled_steps) << "the refused step ran";
  limited.compiler.memory_limit = planned.planned_peak_bytes;
  Session(limited).mark_step();
  EXPECT_EQ(metrics().compiled_steps, before.compiled_steps + 1);
  EXPECT_TRUE(std::isfinite(loss.item<float>()));
}
