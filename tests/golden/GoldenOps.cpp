//===- GoldenOps.cpp - every op, forward and backward, for PyTorch --------===//
//
// Usage: golden_ops <out-dir>
// For each case (an op or a small composite, named as in
// compare_ops_with_torch.py), computes out = f(inputs) and the gradient of
// sum(out * w) for every input on the reference executor (f32), and writes
// inputs, w, out and the gradients to <out-dir> for PyTorch to recompute.
//
//===----------------------------------------------------------------------===//
#include "sinter/sinter.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace sinter;
namespace F = nn::functional;
using V = std::vector<Tensor>;

std::vector<float> sampleValues(int64_t count, int salt, bool positive) {
  std::vector<float> values;
  for (int64_t i = 0; i < count; ++i) {
    double v =
        std::sin(1.3 * static_cast<double>(i + 1) + 0.7 * salt) * 0.9 + 0.05 * ((i + salt) % 3);
    values.push_back(static_cast<float>(positive ? std::fabs(v) + 0.5 : v));
  }
  return values;
}

struct Case {
  std::string name;
  std::vector<Shape> shapes;
  std::function<Tensor(const V &)> f;
  std::vector<int> positive = {}; // inputs that must be > 0
};

std::vector<Case> cases() {
  Tensor targets = from_vector<int64_t>({2, 0, -100, 1}, {4});
  Tensor ids = from_vector<int64_t>({1, 3, 1, 0}, {2, 2});
  return {
      {"add_broadcast", {{2, 3}, {3}}, [](const V &x) { return x[0] + x[1]; }},
      {"sub_broadcast", {{2, 1}, {1, 3}}, [](const V &x) { return x[0] - x[1]; }},
      {"mul", {{2, 3}, {2, 3}}, [](const V &x) { return x[0] * x[1]; }},
      {"div", {{2, 3}, {2, 3}}, [](const V &x) { return x[0] / x[1]; }, {1}},
      {"scalar_ops", {{4}}, [](const V &x) { return 3 * x[0] - 2 / (x[0] * x[0] + 1) + 0.5; }},
      {"neg", {{3}}, [](const V &x) { return -x[0]; }},
      {"exp", {{2, 3}}, [](const V &x) { return exp(x[0]); }},
      {"log", {{2, 3}}, [](const V &x) { return log(x[0]); }, {0}},
      {"tanh", {{2, 3}}, [](const V &x) { return tanh(x[0]); }},
      {"sqrt", {{2, 3}}, [](const V &x) { return sqrt(x[0]); }, {0}},
      {"rsqrt", {{2, 3}}, [](const V &x) { return rsqrt(x[0]); }, {0}},
      {"sigmoid", {{2, 3}}, [](const V &x) { return sigmoid(x[0]); }},
      {"erf", {{2, 3}}, [](const V &x) { return erf(x[0]); }},
      {"sin", {{2, 3}}, [](const V &x) { return sin(x[0]); }},
      {"cos", {{2, 3}}, [](const V &x) { return cos(x[0]); }},
      {"abs", {{2, 3}}, [](const V &x) { return abs(x[0]); }},
      {"relu", {{2, 3}}, [](const V &x) { return relu(x[0]); }},
      {"pow_scalar", {{2, 3}}, [](const V &x) { return x[0].pow(3.0); }},
      {"pow_tensor", {{2, 3}, {2, 3}}, [](const V &x) { return x[0].pow(x[1]); }, {0}},
      {"maximum", {{2, 3}, {3}}, [](const V &x) { return maximum(x[0], x[1]); }},
      {"minimum", {{2, 3}, {2, 3}}, [](const V &x) { return minimum(x[0], x[1]); }},
      {"where", {{2, 3}, {2, 3}}, [](const V &x) { return where(x[0] > 0, x[0] * 2, x[1]); }},
      {"masked_fill",
       {{2, 3}},
       [](const V &x) { return x[0].masked_fill(x[0] > 0.5, 0.0) * x[0]; }},
      {"reshape",
       {{2, 3}},
       [](const V &x) {
         return x[0].reshape({3, 2});
       }},
      {"permute",
       {{2, 3, 4}},
       [](const V &x) {
         return x[0].permute({2, 0, 1});
       }},
      {"transpose", {{2, 3, 4}}, [](const V &x) { return x[0].transpose(0, 2); }},
      {"expand",
       {{2, 1}},
       [](const V &x) {
         return x[0].expand({4, 2, 3});
       }},
      {"slice_step", {{7, 5}}, [](const V &x) { return x[0].slice(0, 1, 7, 3).slice(1, 0, 5, 2); }},
      {"cat",
       {{2, 3}, {2, 1}},
       [](const V &x) {
         return cat({x[0], x[1] * 2, x[0]}, 1);
       }},
      {"stack",
       {{2, 3}, {2, 3}},
       [](const V &x) {
         return stack({x[0], x[1]}, 1);
       }},
      {"sum_dims",
       {{2, 3, 4}},
       [](const V &x) {
         return x[0].sum({0, 2});
       }},
      {"mean_keepdim", {{2, 3}}, [](const V &x) { return x[0].mean({-1}, true) * x[0]; }},
      {"amax", {{3, 4}}, [](const V &x) { return x[0].amax({1}); }},
      {"matmul", {{2, 3}, {3, 4}}, [](const V &x) { return matmul(x[0], x[1]); }},
      {"matmul_batched", {{2, 2, 3}, {2, 3, 2}}, [](const V &x) { return matmul(x[0], x[1]); }},
      {"matmul_shared_rhs", {{2, 2, 3}, {3, 4}}, [](const V &x) { return matmul(x[0], x[1]); }},
      {"matmul_vectors", {{3}, {3, 2}}, [](const V &x) { return matmul(x[0], x[1]); }},
      {"linear", {{2, 3}, {4, 3}, {4}}, [](const V &x) { return F::linear(x[0], x[1], x[2]); }},
      {"gelu", {{2, 3}}, [](const V &x) { return F::gelu(x[0]); }},
      {"gelu_tanh", {{2, 3}}, [](const V &x) { return F::gelu(x[0], "tanh"); }},
      {"softmax", {{2, 4}}, [](const V &x) { return F::softmax(x[0], 1); }},
      {"log_softmax", {{2, 4}}, [](const V &x) { return F::log_softmax(x[0], -1); }},
      {"layer_norm",
       {{3, 4}, {4}, {4}},
       [](const V &x) { return F::layer_norm(x[0], {4}, x[1], x[2]); }},
      {"dropout_eval", {{2, 3}}, [](const V &x) { return F::dropout(x[0], 0.5, false); }},
      // In training: the mask is Philox's (kernels/common/philox.h), which
      // compare_ops_with_torch.py computes on its own from the generator's
      // state written beside the case.
      {"dropout_train", {{8, 33}}, [](const V &x) { return F::dropout(x[0], 0.25, true); }},
      {"embedding", {{4, 2}}, [ids](const V &x) { return F::embedding(ids, x[0]); }},
      {"cross_entropy",
       {{4, 3}},
       [targets](const V &x) { return F::cross_entropy(x[0], targets); }},
      {"cross_entropy_sum",
       {{4, 3}},
       [targets](const V &x) { return F::cross_entropy(x[0], targets, -100, F::Reduction::sum); }},
      {"mse_loss", {{2, 3}, {2, 3}}, [](const V &x) { return F::mse_loss(x[0], x[1]); }},
      {"attention_causal",
       {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
       [](const V &x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], true); }},
      {"conv2d",
       {{2, 2, 5, 5}, {3, 2, 3, 3}, {3}},
       [](const V &x) { return F::conv2d(x[0], x[1], x[2]); }},
      {"conv2d_strided_grouped",
       {{1, 4, 6, 6}, {2, 2, 3, 2}},
       [](const V &x) {
         return F::conv2d(x[0], x[1], Tensor(), {2, 1}, {1, 2}, {1, 2}, 2);
       }},
      {"max_pool2d",
       {{1, 2, 5, 5}},
       [](const V &x) {
         return F::max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1});
       }},
      {"avg_pool2d",
       {{2, 1, 4, 4}},
       [](const V &x) {
         return F::avg_pool2d(x[0], {3, 2}, {1, 2}, {1, 1});
       }},
      {"batch_norm_train",
       {{4, 3, 2, 2}, {3}, {3}},
       [](const V &x) { return F::batch_norm(x[0], zeros({3}), ones({3}), x[1], x[2], true); }},
  };
}

void writeTensor(std::ofstream &manifest, const std::string &dir, const std::string &name,
                 const Tensor &t) {
  std::vector<float> v = t.to_vector<float>();
  std::ofstream out(dir + "/" + name + ".bin", std::ios::binary);
  out.write(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
  manifest << name;
  for (int64_t d : t.shape())
    manifest << ' ' << d;
  manifest << '\n';
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: golden_ops <out-dir>\n");
    return 2;
  }
  std::string dir = argv[1];
  std::ofstream manifest(dir + "/manifest.txt");
  try {
    // The reference executor on purpose: the op's definition, not a kernel.
    reference::ReferenceGuard oracle;
    manual_seed(20261201);
    for (const Case &c : cases()) {
      V inputs;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        bool positive = std::find(c.positive.begin(), c.positive.end(), int(i)) != c.positive.end();
        inputs.push_back(
            from_vector(sampleValues(numel(c.shapes[i]), int(i), positive), c.shapes[i])
                .requires_grad_());
      }
      // The random generator's state before the case, for the cases that draw.
      RngState rng = get_rng_state();
      std::ofstream(dir + "/" + c.name + ".rng") << rng.seed << ' ' << rng.stream << '\n';
      Tensor out = c.f(inputs);
      Tensor w = from_vector(sampleValues(out.numel(), 7, false), out.shape());
      (out * w).sum().backward();
      for (size_t i = 0; i < inputs.size(); ++i)
        writeTensor(manifest, dir, c.name + ".in" + std::to_string(i), inputs[i]);
      writeTensor(manifest, dir, c.name + ".w", w);
      writeTensor(manifest, dir, c.name + ".out", out);
      for (size_t i = 0; i < inputs.size(); ++i)
        writeTensor(manifest, dir, c.name + ".grad" + std::to_string(i), inputs[i].grad());
    }
  } catch (const Error &error) {
    std::fprintf(stderr, "golden_ops: %s\n", error.what());
    return 1;
  }
  return 0;
}
