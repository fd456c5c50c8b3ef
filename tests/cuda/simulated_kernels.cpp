//===- simulated_kernels.cpp - CUDA kernels on the simulator vs the CPU's --===//
//
// Usage: simulated_kernels MODULE.mlir [MIN_KERNELS | all]
//
// Reads a planned module (sinter-opt --sinter-pipeline's output), writes its
// kernels with the CPU renderer (built by the host compiler as the CPU
// target builds them) and with the CUDA renderer (the CUDA C++ that NVRTC
// compiles, built here by the host compiler against the SIMT prelude:
// Note [The CUDA simulator]), runs every kernel the CUDA renderer wrote on
// the same random inputs both ways, in order, in the simulator's shuffled
// mode and (where the plan allows it) with results written over inputs as
// buffer assignment may place them, and compares every output: integers
// and booleans exactly, floats within 1e-5 of the tensor's largest
// magnitude (the CPU's
// vectorised libmvec and the scalar libm differ in the last bits of tanh
// and erf, which 1 + tanh(x) near -1 magnifies).
// Exits 1 on any difference, or when fewer than MIN_KERNELS (default 1)
// kernels were compared, or with `all` when the CUDA renderer left any
// fusion unwritten (it names each and why).
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CudaKernels.h"
#include "sinter/Codegen/HostCompiler.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Dialect/Sinter/SinterDialect.h"
#include "sinter/runtime/Simt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using CpuKernel = void (*)(const void *const *, void *const *);
using SimulatedKernel = void (*)(const void *, const void *, void *const *, void *);

size_t elementBytes(const std::string &dtype) { return dtype == "i1" ? 1 : dtype == "i64" ? 8 : 4; }

std::vector<unsigned char> randomBuffer(const std::string &dtype, int64_t n, std::mt19937 &random) {
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * elementBytes(dtype) + 1);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(0, 7);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == "f32") {
      float v = normal(random);
      std::memcpy(bytes.data() + i * 4, &v, 4);
    } else if (dtype == "i64") {
      int64_t v = small(random);
      std::memcpy(bytes.data() + i * 8, &v, 8);
    } else if (dtype == "i32") {
      int32_t v = small(random);
      std::memcpy(bytes.data() + i * 4, &v, 4);
    } else {
      bytes[i] = static_cast<unsigned char>(small(random) & 1);
    }
  }
  return bytes;
}

/// "" when `a` and `b` (of `dtype`, `n` elements) agree, else the first
/// difference: integers and booleans exactly, floats within 1e-5 of the
/// tensor's largest magnitude (plus 1e-7), as compare_values() measures
/// the CPU's compiled steps (which take 1e-4 against the reference).
std::string difference(const std::string &dtype, int64_t n, const unsigned char *a,
                       const unsigned char *b) {
  if (dtype == "f32") {
    std::vector<float> x(n), y(n);
    std::memcpy(x.data(), a, n * 4);
    std::memcpy(y.data(), b, n * 4);
    float largest = 0;
    for (float v : x)
      if (std::isfinite(v))
        largest = std::max(largest, std::fabs(v));
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(x[i]) && std::isnan(y[i]))
        continue;
      if (!(std::fabs(x[i] - y[i]) <= 1e-7f + 1e-5f * largest) &&
          !(std::isinf(x[i]) && x[i] == y[i])) {
        char text[128];
        std::snprintf(text, sizeof text, ": CPU %.9g, simulated %.9g (largest %.9g)", x[i], y[i],
                      largest);
        return "element " + std::to_string(i) + text;
      }
    }
    return "";
  }
  size_t size = elementBytes(dtype);
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(a + i * size, b + i * size, size) != 0)
      return "element " + std::to_string(i) + " differs";
  return "";
}

/// What a kernel takes and writes: (dtype, elements) of each input and
/// result, and the results it may write over inputs.
struct Operands {
  std::vector<std::pair<std::string, int64_t>> inputs, results;
  std::vector<std::pair<unsigned, unsigned>> inPlace;
};

/// Kernel k's operands: a fusion's from its CUDA plan (its in-place pairs
/// are the CUDA kernel's), a library op's from its types.
Operands operandsOf(const sinter::codegen::CudaKernels &cuda, int64_t k) {
  Operands o;
  if (const std::optional<sinter::codegen::KernelPlan> &plan = cuda.plans[k]) {
    for (size_t i = 0; i < plan->inputs.size(); ++i) {
      int input = -1 - static_cast<int>(i);
      o.inputs.emplace_back(plan->dtypeOf(input), plan->elementsOf(input));
    }
    for (const auto &result : plan->results)
      o.results.emplace_back(plan->dtypeOf(result.value), plan->elementsOf(result.value));
    o.inPlace = plan->inPlace;
    return o;
  }
  // The dialect's name of the element type, as a plan writes it ("f32").
  auto described = [](mlir::Value v) {
    auto type = mlir::cast<mlir::ShapedType>(v.getType());
    std::string dtype;
    llvm::raw_string_ostream os(dtype);
    os << type.getElementType();
    return std::make_pair(dtype, mlir::ShapedType::getNumElements(type.getShape()));
  };
  for (mlir::Value v : cuda.ops[k]->getOperands())
    o.inputs.push_back(described(v));
  for (mlir::Value v : cuda.ops[k]->getResults())
    o.results.push_back(described(v));
  return o;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: simulated_kernels MODULE.mlir [MIN_KERNELS]\n");
    return 2;
  }
  const bool all = argc > 2 && std::strcmp(argv[2], "all") == 0;
  int minKernels = argc > 2 && !all ? std::atoi(argv[2]) : 1;
  mlir::MLIRContext context;
  context
      .loadDialect<sinter::ir::SinterDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module) {
    std::fprintf(stderr, "simulated_kernels: cannot parse %s\n", argv[1]);
    return 2;
  }
  // The CPU's kernels, as the CPU target builds them.
  const sinter::codegen::Target &cpu = sinter::codegen::cpuTarget();
  mlir::FailureOr<sinter::codegen::RenderedKernels> rendered = cpu.render(*module);
  if (mlir::failed(rendered))
    return 1;
  sinter::StatusOr<sinter::codegen::BuiltKernels> built = cpu.build(*rendered);
  if (!built.ok()) {
    std::fprintf(stderr, "simulated_kernels: %s\n", std::string(built.status().message()).c_str());
    return 1;
  }
  void *cpuLibrary = dlopen(built->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (cpuLibrary == nullptr) {
    std::fprintf(stderr, "simulated_kernels: %s\n", dlerror());
    return 1;
  }
  // The CUDA kernels, compiled by the host compiler for the simulator.
  sinter::codegen::CudaKernels cuda = sinter::codegen::renderCudaKernels(*module, "sinter_kernel_");
  std::filesystem::path work =
      std::filesystem::temp_directory_path() / ("sinter-simulated-" + std::to_string(getpid()));
  std::filesystem::create_directories(work);
  std::ofstream(work / "kernels.cpp") << cuda.source;
  std::string command =
      std::string(SINTER_CXX) + " -std=c++20 -O1 -shared -fPIC -DSINTER_SIMULATED -I" +
      SINTER_KERNELS_DIR + " -I" + SINTER_RUNTIME_INCLUDE + " " + (work / "kernels.cpp").string() +
      " -o " + (work / "kernels.so").string() + " -L" + SINTER_LIBRARY_DIR + " -Wl,-rpath," +
      SINTER_LIBRARY_DIR + " -lsinter_cuda_simulator -lsinter_runtime";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "simulated_kernels: the host compiler failed on %s\n",
                 (work / "kernels.cpp").string().c_str());
    return 1;
  }
  void *cudaLibrary = dlopen((work / "kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (cudaLibrary == nullptr) {
    std::fprintf(stderr, "simulated_kernels: %s\n", dlerror());
    return 1;
  }

  int compared = 0, failures = 0, inPlaceRuns = 0, unwritten = 0, libraryKernels = 0;
  for (int64_t k = 0; k < cuda.count; ++k)
    if (!cuda.written[k] && !cuda.library[k]) {
      std::fprintf(stderr, "sinter_kernel_%lld: not written for CUDA: %s\n",
                   static_cast<long long>(k), cuda.why[k].c_str());
      ++unwritten;
    }
  if (all && unwritten > 0)
    ++failures;
  std::mt19937 random(11);
  for (int64_t k = 0; k < cuda.count; ++k) {
    if (!cuda.written[k])
      continue;
    const Operands plan = operandsOf(cuda, k);
    std::string name = "sinter_kernel_" + std::to_string(k);
    auto cpuKernel = reinterpret_cast<CpuKernel>(dlsym(cpuLibrary, name.c_str()));
    auto simulated =
        reinterpret_cast<SimulatedKernel>(dlsym(cudaLibrary, (name + "_simulate").c_str()));
    if (cpuKernel == nullptr || simulated == nullptr) {
      std::fprintf(stderr, "%s: missing from a library\n", name.c_str());
      ++failures;
      continue;
    }
    std::vector<std::vector<unsigned char>> inputs;
    std::vector<const void *> inputPointers;
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      inputs.push_back(randomBuffer(plan.inputs[i].first, plan.inputs[i].second, random));
      inputPointers.push_back(inputs.back().data());
    }
    std::vector<std::string> dtypes;
    std::vector<int64_t> sizes;
    for (const auto &[dtype, count] : plan.results) {
      dtypes.push_back(dtype);
      sizes.push_back(count);
    }
    // Three runs: in order, in the shuffled order, and with each result
    // the plan may write over an input (Note [In-place kernels]) written
    // over it, as buffer assignment may place it.
    enum class Run { InOrder, Shuffled, InPlace };
    std::vector<std::vector<unsigned char>> inOrder; // the first run's results
    for (Run run : {Run::InOrder, Run::Shuffled, Run::InPlace}) {
      const bool shuffled = run == Run::Shuffled;
      std::vector<int> overInput(dtypes.size(), -1);
      if (run == Run::InPlace) {
        if (plan.inPlace.empty())
          continue;
        std::vector<bool> taken(inputs.size(), false);
        for (auto [input, result] : plan.inPlace)
          if (!taken[input] && overInput[result] < 0 &&
              inputs[input].size() ==
                  static_cast<size_t>(sizes[result]) * elementBytes(dtypes[result]) + 1) {
            taken[input] = true;
            overInput[result] = static_cast<int>(input);
          }
        ++inPlaceRuns;
      }
      // The simulated kernel's buffers are the simulated device's memory
      // (guard zones: a write out of bounds is reported).
      sinter::simt::Memory memory;
      std::vector<std::vector<unsigned char>> expected;
      std::vector<unsigned char *> got;
      std::vector<void *> expectedPointers, buffers;
      for (size_t i = 0; i < inputs.size(); ++i) {
        auto *device = static_cast<unsigned char *>(memory.allocate(inputs[i].size()));
        std::memcpy(device, inputs[i].data(), inputs[i].size());
        buffers.push_back(device);
      }
      for (size_t r = 0; r < dtypes.size(); ++r) {
        size_t bytes = static_cast<size_t>(sizes[r]) * elementBytes(dtypes[r]);
        expected.emplace_back(bytes + 1, 0xab);
        got.push_back(overInput[r] >= 0 ? static_cast<unsigned char *>(buffers[overInput[r]])
                                        : static_cast<unsigned char *>(memory.allocate(bytes)));
      }
      for (size_t r = 0; r < dtypes.size(); ++r) {
        expectedPointers.push_back(expected[r].data());
        buffers.push_back(got[r]);
      }
      // The CUDA kernel takes its own plan's scratch buffers after its
      // results (split reductions' partials), the CPU's its plan's.
      if (cuda.plans[k])
        for (int64_t bytes : cuda.plans[k]->scratchBytes)
          buffers.push_back(memory.allocate(static_cast<size_t>(bytes)));
      std::vector<std::vector<unsigned char>> scratch;
      for (int64_t bytes : rendered->scratch[k])
        scratch.emplace_back(static_cast<size_t>(bytes) + 64);
      for (auto &buffer : scratch)
        expectedPointers.push_back(buffer.data());
      cpuKernel(inputPointers.data(), expectedPointers.data());
      sinter::simt::Options options;
      options.shuffled = shuffled;
      options.seed = static_cast<uint64_t>(k);
      sinter::Status status = absl::OkStatus();
      simulated(&cuda.shapes[k], &options, buffers.data(), &status);
      if (status.ok())
        status = memory.check(name);
      if (!status.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), std::string(status.message()).c_str());
        ++failures;
        break;
      }
      for (size_t r = 0; r < dtypes.size(); ++r) {
        std::string why = difference(dtypes[r], sizes[r], expected[r].data(), got[r]);
        if (!why.empty()) {
          std::fprintf(stderr, "%s%s: result %zu (%s[%lld]): %s\n", name.c_str(),
                       shuffled              ? " (shuffled)"
                       : run == Run::InPlace ? " (written in place)"
                                             : "",
                       r, dtypes[r].c_str(), static_cast<long long>(sizes[r]), why.c_str());
          ++failures;
        }
        // Every reduction runs in a fixed order: the shuffled run's bits
        // are the first run's.
        size_t bytes = static_cast<size_t>(sizes[r]) * elementBytes(dtypes[r]);
        if (run == Run::InOrder)
          inOrder.emplace_back(got[r], got[r] + bytes);
        else if (run == Run::Shuffled && std::memcmp(inOrder[r].data(), got[r], bytes) != 0) {
          std::fprintf(stderr,
                       "%s (shuffled): result %zu differs in its bits from the run in "
                       "order\n",
                       name.c_str(), r);
          ++failures;
        }
      }
    }
    ++compared;
    libraryKernels += cuda.library[k] ? 1 : 0;
  }
  std::filesystem::remove_all(work);
  std::printf("simulated_kernels: %d of %lld kernels written for CUDA and compared with the CPU's "
              "(%d library ops), "
              "%d of them also with results written over inputs (%d differ)\n",
              compared, static_cast<long long>(cuda.count), libraryKernels, inPlaceRuns, failures);
  if (compared < minKernels) {
    std::fprintf(stderr, "simulated_kernels: fewer than %d kernels compared\n", minKernels);
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
