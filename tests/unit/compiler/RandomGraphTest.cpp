//===- RandomGraphTest.cpp - random op graphs, compiled vs reference ------===//
//
// Fusion and codegen bugs show up first on graphs nobody wrote by hand: a
// generator chains random ops (elementwise with broadcasting, reductions,
// reshapes, transposes, slices, matmuls, softmax) over random shapes, 50
// graphs per step, and the compiled step must match the reference executor.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using namespace sinter;
namespace F = nn::functional;

class Generator {
public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  Tensor input(const Shape &shape) {
    std::vector<float> values(static_cast<size_t>(numel(shape)));
    for (float &v : values)
      v = std::uniform_real_distribution<float>(-1.5f, 1.5f)(rng_);
    return from_vector(values, shape);
  }

  Shape shape() {
    Shape s(static_cast<size_t>(pick(1, 3)));
    for (int64_t &d : s)
      d = pick(1, 5);
    return s;
  }

  /// One random op applied to `x` (values stay in a tame range).
  Tensor step(const Tensor &x) {
    switch (pick(0, 11)) {
    case 0:
      return tanh(x);
    case 1:
      return sigmoid(x) * 2 - 1;
    case 2:
      return sqrt(abs(x) + 1) - 1;
    case 3: { // broadcast binary op with a fresh operand of a compatible shape
      Shape s = x.shape();
      for (int64_t &d : s)
        if (pick(0, 2) == 0)
          d = 1;
      if (!s.empty() && pick(0, 2) == 0)
        s.erase(s.begin());
      Tensor y = input(s);
      switch (pick(0, 3)) {
      case 0:
        return x + y;
      case 1:
        return x * y;
      case 2:
        return maximum(x, y);
      default:
        return x / (abs(y) + 1);
      }
    }
    case 4: { // reduction over random dims
      if (x.dim() == 0)
        return x * 0.5;
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < x.dim(); ++d)
        if (pick(0, 1))
          dims.push_back(d);
      if (dims.empty())
        dims.push_back(pick(0, x.dim() - 1));
      bool keep = pick(0, 1);
      return pick(0, 1) ? x.sum(dims, keep) * 0.25 : x.amax(dims, keep);
    }
    case 5:
      return x.reshape({-1});
    case 6: { // transpose
      if (x.dim() < 2)
        return x.unsqueeze(0);
      return x.transpose(0, x.dim() - 1);
    }
    case 7: { // slice with a step
      if (x.dim() == 0 || x.shape()[0] < 2)
        return x + 0.5;
      return x.slice(0, pick(0, 1), x.shape()[0], pick(1, 2));
    }
    case 8: { // matmul with a fresh matrix
      if (x.dim() == 0)
        return x;
      Tensor w = input({x.shape().back(), pick(1, 4)});
      return matmul(x, w) * 0.5;
    }
    case 9:
      return x.dim() == 0 ? x : F::softmax(x, -1);
    case 10:
      return where(x > 0, x, x * 0.1);
    default:
      return x.unsqueeze(pick(0, x.dim()));
    }
  }

private:
  std::mt19937_64 rng_;
};

/// The step's random graphs: the same ones for the same seed.
std::vector<Tensor> randomGraphs(uint64_t seed, int count) {
  Generator gen(seed);
  std::vector<Tensor> outputs;
  for (int g = 0; g < count; ++g) {
    Tensor x = gen.input(gen.shape());
    int64_t length = gen.pick(2, 8);
    for (int64_t k = 0; k < length; ++k)
      x = gen.step(x);
    outputs.push_back(x);
  }
  return outputs;
}

/// Builds 1,000 random graphs in 20 steps, runs each step with `config`
/// (compiled or eager), and compares every result with the reference.
void checkRandomGraphs(const CompilerConfig &config, const char *mode) {
  compiler::install();
  set_compiler_config(config);
  constexpr int kSteps = 20, kGraphsPerStep = 50;
  int64_t compared = 0;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<std::vector<double>> expected;
    {
      reference::ReferenceGuard oracle;
      for (const Tensor &t : randomGraphs(1000 + s, kGraphsPerStep))
        expected.push_back(t.to_vector<double>());
    }
    // The same graphs again, for the compiled run.
    std::vector<Tensor> fresh = randomGraphs(1000 + s, kGraphsPerStep);
    Metrics before = metrics();
    mark_step();
    Metrics after = metrics();
    ASSERT_EQ(after.compiled_steps + after.eager_steps,
              before.compiled_steps + before.eager_steps + 1)
        << metrics_report();
    ASSERT_EQ(after.eager_steps - before.eager_steps, config.enabled ? 0 : 1);
    for (int g = 0; g < kGraphsPerStep; ++g) {
      std::vector<double> got = fresh[g].to_vector<double>();
      ASSERT_EQ(got.size(), expected[g].size());
      double scale = 0;
      for (double e : expected[g])
        scale = std::max(scale, std::fabs(e));
      for (size_t k = 0; k < got.size(); ++k)
        ASSERT_NEAR(got[k], expected[g][k], 1e-4 * scale + 1e-6)
            << mode << " step " << s << " graph " << g << " element " << k;
      ++compared;
    }
  }
  set_compiler_config({});
  std::printf("RANDOM OK  %lld random graphs run %s and matched the reference\n",
              static_cast<long long>(compared), mode);
  EXPECT_EQ(compared, kSteps * kGraphsPerStep);
}

TEST(RandomGraphs, CompiledMatchesReference) { checkRandomGraphs({.enabled = true}, "compiled"); }

TEST(RandomGraphs, EagerMatchesReference) { checkRandomGraphs({.enabled = false}, "eager"); }

} // namespace
