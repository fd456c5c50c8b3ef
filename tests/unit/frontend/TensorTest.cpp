//===- TensorTest.cpp - lazy tensors: creation, ops, values ---------------===//
#include "GradCheck.h"
#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace sinter {
namespace {

using testing::errorOf;

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatEq;
using ::testing::HasSubstr;

std::vector<float> values(const Tensor &t) { return t.to_vector<float>(); }

TEST(Tensor, CreationAndMetadata) {
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), DType::f32);
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.dim(), 2);
  EXPECT_EQ(z.size(-1), 3);
  EXPECT_EQ(z.device(), Device::cpu());
  EXPECT_THAT(values(z), ElementsAre(0, 0, 0, 0, 0, 0));
  EXPECT_THAT(values(ones({2})), ElementsAre(1, 1));
  EXPECT_THAT(values(full({3}, 2.5)), ElementsAre(2.5, 2.5, 2.5));
  EXPECT_THAT(arange(4).to_vector<int64_t>(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(arange(4).dtype(), DType::i64);
  EXPECT_THAT(arange(2, 11, 3).to_vector<int64_t>(), ElementsAre(2, 5, 8));
  EXPECT_THAT(arange(5, 0, -2).to_vector<int64_t>(), ElementsAre(5, 3, 1));
  Tensor v = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(values(v), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(from_vector<int32_t>({1, 2}, {2}).dtype(), DType::i32);
  EXPECT_EQ(from_vector<bool>({true, false}, {2}).dtype(), DType::boolean);
  EXPECT_EQ(full({}, 7.0).item<float>(), 7.0f);
}

TEST(Tensor, ArithmeticBroadcastsLikePyTorch) {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row = from_vector<float>({10, 20, 30}, {3});
  Tensor col = from_vector<float>({100, 200}, {2, 1});
  EXPECT_THAT(values(a + row), ElementsAre(11, 22, 33, 14, 25, 36));
  EXPECT_THAT(values(a + col), ElementsAre(101, 102, 103, 204, 205, 206));
  EXPECT_THAT(values(row - a), ElementsAre(9, 18, 27, 6, 15, 24));
  EXPECT_THAT(values(a * 2), ElementsAre(2, 4, 6, 8, 10, 12));
  EXPECT_THAT(values(2 * a), ElementsAre(2, 4, 6, 8, 10, 12));
  EXPECT_THAT(values(1 - a), ElementsAre(0, -1, -2, -3, -4, -5));
  EXPECT_THAT(values(12 / a), ElementsAre(12, 6, 4, 3, 2.4f, 2));
  EXPECT_THAT(values(a / col), ElementsAre(0.01f, 0.02f, 0.03f, 0.02f, 0.025f, 0.03f));
  EXPECT_THAT(values(-a), ElementsAre(-1, -2, -3, -4, -5, -6));
  EXPECT_EQ((a + col).shape(), (Shape{2, 3}));
  EXPECT_EQ((col + row).shape(), (Shape{2, 3}));
}

TEST(Tensor, TypePromotion) {
  Tensor i = from_vector<int64_t>({1, 2, 3}, {3});
  Tensor f = from_vector<float>({0.5, 0.5, 0.5}, {3});
  EXPECT_EQ((i + f).dtype(), DType::f32);
  EXPECT_EQ((i + 1).dtype(), DType::i64);
  EXPECT_EQ((i * 1.5).dtype(), DType::f32);
  EXPECT_EQ((i / 2).dtype(), DType::f32); // true division
  EXPECT_THAT(values(i / 2), ElementsAre(0.5, 1, 1.5));
  EXPECT_EQ((f.to(DType::f16) + f.to(DType::bf16)).dtype(), DType::f32);
  EXPECT_EQ(sum(i).dtype(), DType::i64);
}

TEST(Tensor, RoundsToItsDtype) {
  Tensor x = from_vector<double>({1.0 + 1e-10, 1.0 / 3.0}, {2});
  EXPECT_EQ(x.to_vector<double>()[0], 1.0);
  EXPECT_EQ(x.to_vector<double>()[1], static_cast<double>(1.0f / 3.0f));
  // bf16 keeps 8 bits of mantissa: 1 + 2^-9 rounds to 1 (ties to even).
  EXPECT_EQ(full({1}, 1.0 + std::ldexp(1.0, -9)).to(DType::bf16).item<double>(), 1.0);
  EXPECT_EQ(full({1}, 1.0 + std::ldexp(1.0, -7)).to(DType::bf16).item<double>(),
            1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(full({1}, 65520.0).to(DType::f16).item<double>(), INFINITY); // past f16's max
  EXPECT_EQ(full({1}, 2.9).to(DType::i32).item<int32_t>(), 2);
  EXPECT_EQ(full({1}, -2.9).to(DType::i64).item<int64_t>(), -2);
}

TEST(Tensor, UnaryFunctions) {
  Tensor x = from_vector<float>({-1, 0, 2}, {3});
  EXPECT_THAT(values(relu(x)), ElementsAre(0, 0, 2));
  EXPECT_THAT(values(abs(x)), ElementsAre(1, 0, 2));
  EXPECT_FLOAT_EQ(values(exp(x))[2], std::exp(2.0f));
  EXPECT_FLOAT_EQ(values(sigmoid(x))[0], 1.0f / (1.0f + std::exp(1.0f)));
  EXPECT_FLOAT_EQ(values(tanh(x))[0], std::tanh(-1.0f));
  EXPECT_FLOAT_EQ(values(erf(x))[2], std::erf(2.0f));
  Tensor p = from_vector<float>({1, 4, 9}, {3});
  EXPECT_THAT(values(sqrt(p)), ElementsAre(1, 2, 3));
  EXPECT_THAT(values(rsqrt(p)), ElementsAre(1, 0.5, 1.0f / 3));
  EXPECT_THAT(values(p.pow(0.5)), ElementsAre(1, 2, 3));
  EXPECT_THAT(values(p.pow(from_vector<float>({2, 0.5, 0}, {3}))), ElementsAre(1, 2, 1));
  EXPECT_FLOAT_EQ(values(log(p))[1], std::log(4.0f));
}

TEST(Tensor, SinAndCos) {
  Tensor x = from_vector<float>({-1, 0, 2.5f}, {3});
  EXPECT_THAT(values(sin(x)), ElementsAre(FloatEq(std::sin(-1.0f)), 0, FloatEq(std::sin(2.5f))));
  EXPECT_THAT(values(x.cos()), ElementsAre(FloatEq(std::cos(-1.0f)), 1, FloatEq(std::cos(2.5f))));
  EXPECT_EQ(sin(x.to(DType::bf16)).dtype(), DType::bf16);
}

TEST(Tensor, LogicalAndBitwiseOpsAreTorchs) {
  Tensor p = from_vector<bool>({false, true, false, true}, {4});
  Tensor q = from_vector<bool>({false, false, true, true}, {4});
  EXPECT_THAT((p & q).to_vector<bool>(), ElementsAre(false, false, false, true));
  EXPECT_THAT((p | q).to_vector<bool>(), ElementsAre(false, true, true, true));
  EXPECT_THAT((p ^ q).to_vector<bool>(), ElementsAre(false, true, true, false));
  EXPECT_THAT((~p).to_vector<bool>(), ElementsAre(true, false, true, false));
  EXPECT_EQ((p & q).dtype(), DType::boolean);
  // Integers: bits, promoted as arithmetic is (bool & i32 is i32), and a
  // number on the right.
  Tensor i = from_vector<int32_t>({12, -6, 0, 7}, {4});
  Tensor j = from_vector<int32_t>({10, 3, -1, 7}, {4});
  EXPECT_THAT((i & j).to_vector<int32_t>(), ElementsAre(8, 2, 0, 7));
  EXPECT_THAT((i | j).to_vector<int32_t>(), ElementsAre(14, -5, -1, 7));
  EXPECT_THAT((i ^ j).to_vector<int32_t>(), ElementsAre(6, -7, -1, 0));
  EXPECT_THAT((~i).to_vector<int32_t>(), ElementsAre(-13, 5, -1, -8));
  EXPECT_THAT(bitwise_not(from_vector<int32_t>({INT32_MIN, INT32_MAX}, {2})).to_vector<int32_t>(),
              ElementsAre(INT32_MAX, INT32_MIN));
  EXPECT_THAT((i & 6).to_vector<int32_t>(), ElementsAre(4, 2, 0, 6));
  EXPECT_EQ((p & i).dtype(), DType::i32);
  EXPECT_EQ(bitwise_xor(i.to(DType::i64), j).dtype(), DType::i64);
  // logical_*: the truth of any dtype, broadcast, as bools.
  Tensor x = from_vector<float>({0, 2.5f, -0.0f, NAN}, {4});
  EXPECT_THAT(logical_not(x).to_vector<bool>(), ElementsAre(true, false, true, false));
  EXPECT_THAT(logical_and(x, i).to_vector<bool>(), ElementsAre(false, true, false, true));
  EXPECT_THAT(logical_or(x, j).to_vector<bool>(), ElementsAre(true, true, true, true));
  EXPECT_THAT(logical_xor(p, x).to_vector<bool>(), ElementsAre(false, false, false, false));
  EXPECT_THAT(logical_and(q, from_vector<bool>({true}, {1})).to_vector<bool>(),
              ElementsAre(false, false, true, true));
  EXPECT_EQ(logical_or(i, j).dtype(), DType::boolean);
  EXPECT_THAT(q.logical_not().to_vector<bool>(), ElementsAre(true, true, false, false));
}

TEST(TensorErrors, TheOpTablesDtypeRulesNameTheOp) {
  Tensor i = arange(3), x = zeros({3});
  EXPECT_THAT(errorOf([&] { return sin(i); }),
              HasSubstr("sin: expects a floating-point tensor, got i64 of shape [3]"));
  EXPECT_THAT(errorOf([&] { return from_vector<bool>({true}, {1}).cos(); }),
              HasSubstr("cos: expects a floating-point tensor, got bool of shape [1]"));
  EXPECT_THAT(errorOf([&] { return x & i; }),
              HasSubstr("and: expects bool or integer tensors, got f32 (of f32 and i64)"));
  EXPECT_THAT(errorOf([&] { return i | 1.5; }),
              HasSubstr("or: expects bool or integer tensors, got f32 (of i64 and a number)"));
  EXPECT_THAT(errorOf([&] { return bitwise_not(x); }),
              HasSubstr("bitwise_not: expects a bool or integer tensor, got f32 of shape [3]"));
  EXPECT_THAT(errorOf([&] { return logical_and(x, zeros({2})); }),
              HasSubstr("logical_and: shapes [3] and [2] cannot be broadcast together"));
  EXPECT_THAT(errorOf([&] { return logical_not(Tensor()); }),
              HasSubstr("logical_not: the tensor is undefined"));
}

TEST(Tensor, ComparisonsWhereMaskedFill) {
  Tensor x = from_vector<float>({1, 5, 3}, {3});
  Tensor y = from_vector<float>({2, 5, 1}, {3});
  EXPECT_THAT((x < y).to_vector<bool>(), ElementsAre(true, false, false));
  EXPECT_THAT((x == y).to_vector<bool>(), ElementsAre(false, true, false));
  EXPECT_THAT((x >= 3).to_vector<bool>(), ElementsAre(false, true, true));
  EXPECT_EQ((x != y).dtype(), DType::boolean);
  EXPECT_THAT(values(where(x > y, x, y)), ElementsAre(2, 5, 3));
  EXPECT_THAT(values(x.masked_fill(x > 2, -1)), ElementsAre(1, -1, -1));
  EXPECT_THAT(values(maximum(x, y)), ElementsAre(2, 5, 3));
  EXPECT_THAT(values(minimum(x, y)), ElementsAre(1, 5, 1));
}

TEST(Tensor, ShapeOps) {
  Tensor x = arange(6, DType::f32).reshape({2, 3});
  EXPECT_THAT(values(x.t()), ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_THAT(values(x.transpose(0, 1)), ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_EQ(x.reshape({3, -1}).shape(), (Shape{3, 2}));
  EXPECT_EQ(x.view({6}).shape(), (Shape{6}));
  EXPECT_EQ(x.unsqueeze(1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(x.unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(1).squeeze().shape(), (Shape{2, 3}));
  EXPECT_EQ(x.unsqueeze(0).squeeze(1).shape(), (Shape{1, 2, 3}));
  EXPECT_THAT(values(x.unsqueeze(0).expand({2, 2, 3})),
              ElementsAre(0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5));
  EXPECT_THAT(values(x.slice(1, 1, 3)), ElementsAre(1, 2, 4, 5));
  EXPECT_THAT(values(x.slice(1, 0, 3, 2)), ElementsAre(0, 2, 3, 5));
  EXPECT_THAT(values(x.slice(1, -2, 100)), ElementsAre(1, 2, 4, 5));
  EXPECT_THAT(values(cat({x, x * 10}, 0)), ElementsAre(0, 1, 2, 3, 4, 5, 0, 10, 20, 30, 40, 50));
  EXPECT_THAT(values(cat({x, x * 10}, 1)), ElementsAre(0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50));
  EXPECT_EQ(stack({x, x}, 1).shape(), (Shape{2, 2, 3}));
  EXPECT_THAT(values(stack({x, x + 1}, 2).slice(2, 1, 2).squeeze(2)),
              ElementsAre(1, 2, 3, 4, 5, 6));
  Tensor y = arange(24, DType::f32).reshape({2, 3, 4});
  Tensor p = y.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_THAT(values(p).front(), 0);
  EXPECT_EQ(values(p)[1], 4); // p[0][0][1] = y[0][1][0]
}

TEST(Tensor, Reductions) {
  Tensor x = from_vector<float>({1, 5, 3, 4, 2, 6}, {2, 3});
  EXPECT_FLOAT_EQ(x.sum().item<float>(), 21);
  EXPECT_THAT(values(x.sum({0})), ElementsAre(5, 7, 9));
  EXPECT_THAT(values(x.sum({1}, true)), ElementsAre(9, 12));
  EXPECT_EQ(x.sum({1}, true).shape(), (Shape{2, 1}));
  EXPECT_THAT(values(x.mean({-1})), ElementsAre(3, 4));
  EXPECT_THAT(values(x.amax({1})), ElementsAre(5, 6));
  EXPECT_FLOAT_EQ(x.amax().item<float>(), 6);
  EXPECT_THAT(x.argmax(1).to_vector<int64_t>(), ElementsAre(1, 2));
  EXPECT_THAT(x.argmax(0).to_vector<int64_t>(), ElementsAre(1, 0, 1));
  EXPECT_EQ(x.argmax(1, true).shape(), (Shape{2, 1}));
  EXPECT_THAT(from_vector<float>({2, 7, 7}, {3}).argmax(0).to_vector<int64_t>(), ElementsAre(1));
}

TEST(Tensor, Matmul) {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  EXPECT_THAT(values(matmul(a, b)), ElementsAre(4, 5, 10, 11));
  Tensor v = from_vector<float>({1, 1, 1}, {3});
  EXPECT_THAT(values(a.matmul(v)), ElementsAre(6, 15));
  EXPECT_EQ(a.matmul(v).shape(), (Shape{2}));
  EXPECT_FLOAT_EQ(v.matmul(v).item<float>(), 3);
  EXPECT_EQ(v.matmul(b).shape(), (Shape{2}));
  Tensor batch = stack({a, a * 2});
  EXPECT_THAT(values(batch.matmul(b)), ElementsAre(4, 5, 10, 11, 8, 10, 20, 22));
  EXPECT_THAT(values(batch.matmul(stack({b, b}))), ElementsAre(4, 5, 10, 11, 8, 10, 20, 22));
  EXPECT_EQ(a.matmul(stack({b, b, b})).shape(), (Shape{3, 2, 2}));
}

TEST(Tensor, EdgeCasesBehaveLikePyTorch) {
  Tensor scalar = full({}, 2.0);
  EXPECT_EQ(scalar.sum({0}).item<float>(), 2.0f); // dim 0 of a scalar is the scalar
  EXPECT_EQ(scalar.mean({-1}).item<float>(), 2.0f);
  EXPECT_EQ(matmul(zeros({0, 3}), zeros({3, 4})).numel(), 0);
  EXPECT_TRUE(matmul(zeros({0, 3}), zeros({3, 4})).to_vector<float>().empty());
  EXPECT_TRUE(std::isnan(relu(full({1}, NAN)).item<float>())); // NaN propagates
  EXPECT_EQ((arange(3) * 2.0).dtype(), DType::f32);            // a float scalar promotes
  EXPECT_EQ((arange(3) * 2).dtype(), DType::i64);
  // Out-of-range integers wrap like machine integers; reading them saturates.
  EXPECT_EQ(full({1}, 4294967296.0 + 5, DType::i32).item<int32_t>(), 5);
  EXPECT_EQ(full({1}, 1e300).to(DType::i64).item<int64_t>(), 0); // wraps mod 2^64 exactly
  EXPECT_EQ(full({1}, 1e10, DType::i64).item<int32_t>(), std::numeric_limits<int32_t>::max());
  EXPECT_THAT(errorOf([] { return ones({1}).expand({-2}); }), HasSubstr("expand: invalid size -2"));
  EXPECT_THAT(errorOf([] {
                return zeros({2, 0}).argmax(1);
              }),
              HasSubstr("argmax: dimension 1 of shape [2, 0] is empty"));
}

TEST(Tensor, RandomIsSeededAndReproducible) {
  manual_seed(42);
  std::vector<float> first = randn({1000}).to_vector<float>();
  std::vector<float> second = randn({1000}).to_vector<float>();
  manual_seed(42);
  EXPECT_EQ(randn({1000}).to_vector<float>(), first);
  EXPECT_NE(first, second);
  double mean = 0, var = 0;
  for (float x : first)
    mean += x / 1000.0;
  for (float x : first)
    var += (x - mean) * (x - mean) / 1000.0;
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var, 1.0, 0.15);
  std::vector<float> u = rand({1000}).to_vector<float>();
  for (float x : u) {
    EXPECT_GE(x, 0.0f);
    EXPECT_LT(x, 1.0f);
  }
}

TEST(Tensor, MarkStepCutsTheGraphAndKeepsValues) {
  Tensor w = ones({2, 2});
  for (int step = 0; step < 3; ++step) {
    w = w * 2 + 1;
    mark_step();
  }
  EXPECT_THAT(values(w), ElementsAre(15, 15, 15, 15));
}

TEST(Tensor, PrintsShapeDtypeAndValues) {
  EXPECT_EQ(from_vector<float>({1, 2.5}, {2}).toString(),
            "Tensor(shape=[2], dtype=f32, values=[1, 2.5])");
}

// Error messages name the op, the shapes and the user's line.

TEST(TensorErrors, NameOpShapesAndLine) {
  Tensor a = zeros({2, 3}), b = zeros({4, 3});
  int line = __LINE__ + 1;
  std::string message = errorOf([&] { return a + b; });
  EXPECT_THAT(message, HasSubstr("TensorTest.cpp:" + std::to_string(line)));
  EXPECT_THAT(message, HasSubstr("add: shapes [2, 3] and [4, 3] cannot be broadcast together"));

  line = __LINE__ + 1;
  message = errorOf([&] { return matmul(a, b); });
  EXPECT_THAT(message, HasSubstr("TensorTest.cpp:" + std::to_string(line)));
  EXPECT_THAT(message, HasSubstr("matmul: a [2, 3] has 3 columns but b [4, 3] has 4 rows"));

  EXPECT_THAT(errorOf([&] {
                return a.reshape({4, 2});
              }),
              HasSubstr("reshape: cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)"));
  EXPECT_THAT(errorOf([&] { return a.sum({2}); }),
              HasSubstr("sum: dimension 2 is out of range for a tensor of rank 2"));
  EXPECT_THAT(errorOf([&] { return arange(3).mean(); }),
              HasSubstr("mean: expects a floating-point tensor, got i64"));
  EXPECT_THAT(errorOf([&] { return exp(arange(3)); }),
              HasSubstr("exp: expects a floating-point tensor, got i64 of shape [3]"));
  EXPECT_THAT(errorOf([&] { return where(a, a, a); }),
              HasSubstr("where: the condition must be a bool tensor, got f32"));
  EXPECT_THAT(errorOf([&] {
                return cat({a, zeros({2, 2})}, 0);
              }),
              HasSubstr("cat: tensor #1 has shape [2, 2] but tensor #0 has [2, 3]"));
  EXPECT_THAT(errorOf([&] { return a.item<float>(); }),
              HasSubstr("item: the tensor has shape [2, 3]"));
  EXPECT_THAT(errorOf([&] {
                return from_vector<float>({1, 2, 3}, {2, 2});
              }),
              HasSubstr("from_vector: 3 values cannot fill shape [2, 2] (4 elements)"));
  EXPECT_THAT(errorOf([&] {
                return a.permute({0, 0});
              }),
              HasSubstr("permute: [0, 0] repeats dimension 0"));
  EXPECT_THAT(errorOf([&] {
                return a.expand({3, 3});
              }),
              HasSubstr("expand: cannot expand shape [2, 3] to [3, 3]"));
  EXPECT_THAT(errorOf([&] { return a.t().t().transpose(0, 2); }),
              HasSubstr("transpose: dimension 2 is out of range for a tensor of rank 2"));
  EXPECT_THAT(errorOf([&] { return a.to(Device::cuda(0)); }), HasSubstr("cuda:0"));
  EXPECT_THAT(errorOf([&] { return Tensor() + a; }), HasSubstr("add: the tensor is undefined"));
}

} // namespace
} // namespace sinter
