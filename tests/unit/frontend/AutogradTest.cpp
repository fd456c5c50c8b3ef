//===- AutogradTest.cpp - gradients of every op ---------------------------===//
#include "GradCheck.h"
#include "sinter/lazy/Node.h"

#include <gmock/gmock.h>

namespace sinter {
namespace {

using testing::gradcheck;
using testing::Input;
using testing::sample;
using V = std::vector<Tensor>;

/// Positive values, for log, sqrt and pow.
Input positive(const Shape &shape, int salt = 0) {
  Input in = sample(shape, salt);
  for (double &v : in.values)
    v = std::fabs(v) + 0.5;
  return in;
}

TEST(Gradcheck, Arithmetic) {
  gradcheck("add broadcast", [](const V &x) { return x[0] + x[1]; },
            {sample({2, 3}), sample({3}, 1)});
  gradcheck("sub broadcast", [](const V &x) { return x[0] - x[1]; },
            {sample({2, 1}), sample({1, 3}, 1)});
  gradcheck("mul", [](const V &x) { return x[0] * x[1]; }, {sample({2, 3}), sample({2, 3}, 1)});
  gradcheck("div", [](const V &x) { return x[0] / x[1]; }, {sample({2, 3}), positive({2, 3}, 1)});
  gradcheck("scalar ops", [](const V &x) { return 3 * x[0] - 2 / (x[0] * x[0] + 1) + 0.5; },
            {sample({4})});
  gradcheck("neg", [](const V &x) { return -x[0]; }, {sample({3})});
}

TEST(Gradcheck, Elementwise) {
  gradcheck("exp", [](const V &x) { return exp(x[0]); }, {sample({2, 3})});
  gradcheck("log", [](const V &x) { return log(x[0]); }, {positive({2, 3})});
  gradcheck("tanh", [](const V &x) { return tanh(x[0]); }, {sample({2, 3})});
  gradcheck("sqrt", [](const V &x) { return sqrt(x[0]); }, {positive({2, 3})});
  gradcheck("rsqrt", [](const V &x) { return rsqrt(x[0]); }, {positive({2, 3})});
  gradcheck("sigmoid", [](const V &x) { return sigmoid(x[0]); }, {sample({2, 3})});
  gradcheck("erf", [](const V &x) { return erf(x[0]); }, {sample({2, 3})});
  gradcheck("sin", [](const V &x) { return sin(x[0]); }, {sample({2, 3})});
  gradcheck("cos", [](const V &x) { return cos(x[0]); }, {sample({2, 3})});
  gradcheck("sin of cos", [](const V &x) { return sin(cos(x[0]) * 3.0); }, {sample({2, 3})});
  gradcheck("abs", [](const V &x) { return abs(x[0]); }, {sample({2, 3})});
  gradcheck("relu", [](const V &x) { return relu(x[0]); }, {sample({2, 3})});
  gradcheck("pow scalar", [](const V &x) { return x[0].pow(3.0); }, {sample({2, 3})});
  gradcheck("pow tensor", [](const V &x) { return x[0].pow(x[1]); },
            {positive({2, 3}), sample({2, 3}, 1)});
  gradcheck("maximum", [](const V &x) { return maximum(x[0], x[1]); },
            {sample({2, 3}), sample({2, 3}, 2)});
  gradcheck("minimum", [](const V &x) { return minimum(x[0], x[1]); },
            {sample({2, 3}), sample({3}, 2)});
  gradcheck("where", [](const V &x) { return where(x[0] > 0, x[0] * 2, x[1]); },
            {sample({2, 3}), sample({2, 3}, 1)});
  gradcheck("masked_fill", [](const V &x) { return x[0].masked_fill(x[0] > 0.5, 0.0) * x[0]; },
            {sample({2, 3})});
}

TEST(Gradcheck, Shapes) {
  gradcheck("reshape",
            [](const V &x) {
              return x[0].reshape({3, 2}) * x[1];
            },
            {sample({2, 3}), sample({3, 2}, 1)});
  gradcheck("permute", [](const V &x) { return x[0].permute({2, 0, 1}); }, {sample({2, 3, 4})});
  gradcheck("transpose", [](const V &x) { return x[0].transpose(0, 2); }, {sample({2, 3, 4})});
  gradcheck("t", [](const V &x) { return x[0].t(); }, {sample({2, 3})});
  gradcheck("unsqueeze squeeze", [](const V &x) { return x[0].unsqueeze(1).squeeze(); },
            {sample({2, 3})});
  gradcheck("expand", [](const V &x) { return x[0].expand({4, 2, 3}); }, {sample({2, 1})});
  gradcheck("slice", [](const V &x) { return x[0].slice(1, 1, 4); }, {sample({2, 5})});
  gradcheck("slice step", [](const V &x) { return x[0].slice(0, 1, 7, 3).slice(1, 0, 5, 2); },
            {sample({7, 5})});
  gradcheck("cat",
            [](const V &x) {
              return cat({x[0], x[1] * 2, x[0]}, 1);
            },
            {sample({2, 3}), sample({2, 1}, 1)});
  gradcheck("stack",
            [](const V &x) {
              return stack({x[0], x[1]}, 1);
            },
            {sample({2, 3}), sample({2, 3}, 1)});
  gradcheck("to f32", [](const V &x) { return x[0].to(DType::f32) * 2; }, {sample({3})});
}

TEST(Gradcheck, Reductions) {
  gradcheck("sum all", [](const V &x) { return x[0].sum(); }, {sample({2, 3})});
  gradcheck("sum dims", [](const V &x) { return x[0].sum({0, 2}); }, {sample({2, 3, 4})});
  gradcheck("sum keepdim", [](const V &x) { return x[0].sum({1}, true) * x[0]; }, {sample({2, 3})});
  gradcheck("mean", [](const V &x) { return x[0].mean({-1}); }, {sample({2, 3})});
  gradcheck("amax", [](const V &x) { return x[0].amax({1}); }, {sample({3, 4})});
  gradcheck("amax keepdim", [](const V &x) { return x[0] - x[0].amax({1}, true); },
            {sample({3, 4})});
}

TEST(Gradcheck, Matmul) {
  gradcheck("matmul 2d", [](const V &x) { return matmul(x[0], x[1]); },
            {sample({2, 3}), sample({3, 4}, 1)});
  gradcheck("matmul batched", [](const V &x) { return matmul(x[0], x[1]); },
            {sample({2, 2, 3}), sample({2, 3, 2}, 1)});
  gradcheck("matmul shared rhs", [](const V &x) { return matmul(x[0], x[1]); },
            {sample({2, 2, 3}), sample({3, 4}, 1)});
  gradcheck("matmul broadcast lhs", [](const V &x) { return matmul(x[0], x[1]); },
            {sample({2, 3}), sample({2, 3, 2}, 1)});
  gradcheck("matmul vectors", [](const V &x) { return matmul(x[0], x[1]) + matmul(x[1], x[0]); },
            {sample({3}), sample({3}, 1)});
  gradcheck("matmul transposed", [](const V &x) { return matmul(x[0].t(), x[1].t()); },
            {sample({3, 2}), sample({4, 3}, 1)});
}

TEST(Autograd, PowAtZeroHasFiniteGradients) {
  // As PyTorch: d(0^0)/dbase = 0 and d(0^b)/db = 0 for b >= 0, not NaN.
  Tensor base = zeros({2}).requires_grad_();
  Tensor exponent = from_vector<float>({0, 2}, {2}).requires_grad_();
  base.pow(exponent).sum().backward();
  EXPECT_THAT(base.grad().to_vector<float>(), ::testing::ElementsAre(0, 0));
  EXPECT_THAT(exponent.grad().to_vector<float>(), ::testing::ElementsAre(0, 0));
}

TEST(Autograd, AccumulatesLikePyTorch) {
  Tensor w = from_vector<float>({1, 2}, {2}).requires_grad_();
  (w * w).sum().backward();
  EXPECT_THAT(w.grad().to_vector<float>(), ::testing::ElementsAre(2, 4));
  (w * 3).sum().backward(); // accumulates
  EXPECT_THAT(w.grad().to_vector<float>(), ::testing::ElementsAre(5, 7));
  w.set_grad(Tensor());
  EXPECT_FALSE(w.grad().defined());
}

TEST(Autograd, BackwardFreesTheGraphUnlessRetained) {
  Tensor w = from_vector<float>({1, 2}, {2}).requires_grad_();
  Tensor y = (w * w).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward(); // through the retained graph: accumulates, then frees it
  EXPECT_THAT(w.grad().to_vector<float>(), ::testing::ElementsAre(4, 8));
  try {
    y.backward();
    ADD_FAILURE() << "a second backward() through a freed graph must fail";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("was freed by the backward() at"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("retain_graph"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("AutogradTest.cpp"));
  }
  // A loss kept after backward() no longer holds the step's intermediate
  // tensors, so mark_step() neither computes them nor keeps them: letting go
  // of the loss then frees its own node only.
  Tensor loss;
  for (int step = 0; step < 3; ++step) {
    loss = (tanh(w * 3.0) * w + w.exp()).sum();
    loss.backward();
    mark_step();
  }
  int64_t withLoss = reference::live_node_count();
  loss = Tensor();
  EXPECT_EQ(withLoss - reference::live_node_count(), 1);
}

TEST(Autograd, SharedSubexpressionsSumTheirGradients) {
  Tensor x = from_vector<float>({3}, {1}).requires_grad_();
  Tensor y = x * x;     // dy/dx = 2x
  Tensor z = y * x + y; // x^3 + x^2: dz/dx = 3x^2 + 2x = 33
  z.sum().backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 33.0f);
}

TEST(Autograd, AGradientSummedOverUsesIsBlamedOnTheUsersLine) {
  // The sum of x's gradients from its two uses is an op of the backward
  // pass: profiles, memory reports and numerics checks name a user's line
  // for it, not the autograd engine's.
  Tensor x = from_vector<float>({3}, {1}).requires_grad_();
  Tensor y = x * 2.0;
  Tensor z = x * 5.0 + y;
  z.sum().backward();
  lazy::NodePtr sum = lazy::node_of(x.grad());
  EXPECT_EQ(sum->op, lazy::Op::Add);
  EXPECT_THAT(sum->loc.file_name(), ::testing::HasSubstr("AutogradTest.cpp"));
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 7.0f);
}

TEST(Autograd, NoGradDetachAndLeaves) {
  Tensor x = ones({2}).requires_grad_();
  EXPECT_TRUE(x.is_leaf());
  Tensor y = x * 2;
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_FALSE(y.detach().requires_grad());
  {
    NoGradGuard guard;
    EXPECT_FALSE((x * 2).requires_grad());
    EXPECT_FALSE(grad_enabled());
  }
  EXPECT_TRUE(grad_enabled());
}

TEST(Autograd, ErrorsNameTheProblem) {
  Tensor x = ones({2}).requires_grad_();
  try {
    (x * 2).backward();
    FAIL();
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("backward: the tensor has shape [2]"));
  }
  try {
    ones({2}).sum().backward();
    FAIL();
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("does not require grad"));
  }
  try {
    arange(3).requires_grad_();
    FAIL();
  } catch (const Error &e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("only floating-point tensors can require gradients"));
  }
}

TEST(Autograd, BackwardIsRecordedLazily) {
  // The backward pass adds nodes to the graph; values appear only on demand,
  // and a training step's update can run through mark_step.
  Tensor w = from_vector<float>({1, -1}, {2}).requires_grad_();
  for (int step = 0; step < 5; ++step) {
    Tensor loss = ((w - 3) * (w - 3)).sum();
    loss.backward();
    {
      NoGradGuard guard;
      Tensor updated = w - 0.25 * w.grad();
      w = updated.detach().requires_grad_();
    }
    mark_step();
  }
  // w <- w - 0.5 (w - 3): the distance to 3 halves every step.
  EXPECT_THAT(w.to_vector<float>(), ::testing::ElementsAre(3 - 2.0f / 32, 3 - 4.0f / 32));
}

} // namespace
} // namespace sinter
