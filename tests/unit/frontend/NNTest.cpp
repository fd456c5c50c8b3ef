//===- NNTest.cpp - nn::functional, layers, optimizers, models ------------===//
#include "GradCheck.h"

#include <gmock/gmock.h>

#include <cmath>

namespace sinter {
namespace {

using testing::errorOf;

namespace F = nn::functional;
using ::testing::ElementsAre;
using testing::gradcheck;
using ::testing::HasSubstr;
using testing::sample;
using V = std::vector<Tensor>;

std::vector<double> values(const Tensor &t) { return t.to_vector<double>(); }

TEST(Functional, Gradients) {
  gradcheck("linear", [](const V &x) { return F::linear(x[0], x[1], x[2]); },
            {sample({2, 3}), sample({4, 3}, 1), sample({4}, 2)});
  gradcheck("gelu erf", [](const V &x) { return F::gelu(x[0]); }, {sample({2, 3})});
  gradcheck("gelu tanh", [](const V &x) { return F::gelu(x[0], "tanh"); }, {sample({2, 3})});
  gradcheck("softmax", [](const V &x) { return F::softmax(x[0], 1); }, {sample({2, 4})});
  gradcheck("softmax over a leading dim", [](const V &x) { return F::softmax(x[0], 0); },
            {sample({3, 2, 4})});
  gradcheck("softmax over dim -2", [](const V &x) { return F::softmax(x[0], -2); },
            {sample({2, 3, 4})});
  gradcheck("log_softmax", [](const V &x) { return F::log_softmax(x[0], -1); }, {sample({2, 4})});
  gradcheck("layer_norm", [](const V &x) { return F::layer_norm(x[0], {4}, x[1], x[2]); },
            {sample({3, 4}), sample({4}, 1), sample({4}, 2)});
  gradcheck("mse_loss", [](const V &x) { return F::mse_loss(x[0], x[1]); },
            {sample({2, 3}), sample({2, 3}, 1)});
  Tensor targets = from_vector<int64_t>({2, 0, -100, 1}, {4});
  gradcheck("cross_entropy", [&](const V &x) { return F::cross_entropy(x[0], targets); },
            {sample({4, 3})});
  gradcheck("cross_entropy sum",
            [&](const V &x) { return F::cross_entropy(x[0], targets, -100, F::Reduction::sum); },
            {sample({4, 3})});
  gradcheck("sdpa causal",
            [](const V &x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], true); },
            {sample({2, 3, 4}), sample({2, 3, 4}, 1), sample({2, 3, 4}, 2)});
  Tensor ids = from_vector<int64_t>({1, 3, 1}, {3});
  gradcheck("embedding", [&](const V &x) { return F::embedding(ids, x[0]); }, {sample({4, 2})});
}

TEST(Functional, ConvolutionAndPoolingGradients) {
  gradcheck("conv2d", [](const V &x) { return F::conv2d(x[0], x[1], x[2]); },
            {sample({2, 2, 4, 4}), sample({3, 2, 3, 3}, 1), sample({3}, 2)});
  gradcheck("conv2d stride pad dilation groups",
            [](const V &x) {
              return F::conv2d(x[0], x[1], Tensor(), {2, 1}, {1, 2}, {1, 2}, 2);
            },
            {sample({1, 4, 5, 5}), sample({2, 2, 3, 2}, 1)});
  gradcheck("max_pool2d",
            [](const V &x) {
              return F::max_pool2d(x[0], {2, 2});
            },
            {sample({1, 2, 4, 4})});
  gradcheck("max_pool2d padded",
            [](const V &x) {
              return F::max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1});
            },
            {sample({1, 1, 5, 5})});
  gradcheck("avg_pool2d",
            [](const V &x) {
              return F::avg_pool2d(x[0], {3, 2}, {1, 2}, {1, 1});
            },
            {sample({2, 1, 4, 4})});
  Tensor mean = zeros({3}), var = ones({3});
  gradcheck("batch_norm train",
            [&](const V &x) { return F::batch_norm(x[0], mean, var, x[1], x[2], true); },
            {sample({4, 3, 2, 2}), sample({3}, 1), sample({3}, 2)});
}

TEST(Functional, ConvolutionValues) {
  // A 3x3 box filter over a 4x4 ramp, padding 1: each output sums its window.
  Tensor x = arange(16, DType::f32).reshape({1, 1, 4, 4});
  Tensor box = ones({1, 1, 3, 3});
  std::vector<double> y = values(F::conv2d(x, box, Tensor(), {1, 1}, {1, 1}));
  EXPECT_EQ(y[0], 0 + 1 + 4 + 5);
  EXPECT_EQ(y[5], 0 + 1 + 2 + 4 + 5 + 6 + 8 + 9 + 10);
  EXPECT_EQ(F::conv2d(x, box, Tensor(), {2, 2}).shape(), (Shape{1, 1, 1, 1}));
  EXPECT_THAT(values(F::max_pool2d(x, {2, 2})), ElementsAre(5, 7, 13, 15));
  EXPECT_THAT(values(F::avg_pool2d(x, {2, 2})), ElementsAre(2.5, 4.5, 10.5, 12.5));
  // Batch norm in training normalises per channel and updates running stats.
  Tensor rm = zeros({1}), rv = ones({1});
  Tensor z = F::batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.5);
  EXPECT_NEAR(z.mean().item<double>(), 0, 1e-6);
  EXPECT_NEAR(rm.item<double>(), 0.5 * 7.5, 1e-5);
  EXPECT_NEAR(rv.item<double>(), 0.5 + 0.5 * (85.0 / 4) * 16 / 15, 1e-4);
  EXPECT_THAT(
      errorOf([&] {
        return F::conv2d(x, zeros({1, 2, 3, 3}));
      }),
      HasSubstr("conv2d: input [1, 1, 4, 4] has 1 channels but weight [1, 2, 3, 3] expects 2"));
  EXPECT_THAT(
      errorOf([&] {
        return F::conv2d(x, zeros({1, 1, 5, 5}));
      }),
      HasSubstr("conv2d: the kernel [1, 1, 5, 5] is larger than the padded input [1, 1, 4, 4]"));
  EXPECT_THAT(errorOf([&] {
                return F::max_pool2d(x, {2, 2}, {}, {2, 2});
              }),
              HasSubstr("max_pool2d: padding [2, 2] must be at most half of kernel_size [2, 2]"));
  EXPECT_THAT(errorOf([&] {
                return F::max_pool2d(zeros({4, 4}), {2, 2});
              }),
              HasSubstr("max_pool2d: expects an input [N, C, H, W], got [4, 4]"));
}

TEST(Functional, CrossEntropyChecksComputedTargets) {
  // Targets computed lazily are checked when the graph runs, at the user's line.
  Tensor logits = zeros({2, 3});
  Tensor targets = from_vector<int64_t>({1, 2}, {2}) + 1; // 2 and 3: 3 is out of range
  int line = __LINE__ + 1;
  Tensor loss = F::cross_entropy(logits, targets);
  std::string message = errorOf([&] { return loss.item<float>(); });
  EXPECT_THAT(message, HasSubstr("NNTest.cpp:" + std::to_string(line)));
  EXPECT_THAT(message, HasSubstr("index 3 is out of range for dimension 0 of size 3"));
}

TEST(Functional, HalfPrecisionStatisticsInF32) {
  // A mean of 1000 f16 values of 100 overflows an f16 sum (max 65504).
  EXPECT_EQ(full({1000}, 100.0, DType::f16).mean().item<double>(), 100.0);
  // A layer norm of bf16 values keeps its statistics in f32: its first
  // output, -1.3416, rounds to bf16's -1.34375; statistics kept in bf16
  // give -1.3359, within 0.02 of the same value.
  Tensor big = from_vector<float>({300, 500, 700, 900}, {1, 4}).to(DType::bf16);
  std::vector<double> ln = values(F::layer_norm(big, {4}));
  EXPECT_EQ(ln[0], -1.34375);
  EXPECT_EQ(ln[3], 1.34375);
}

TEST(Functional, Values) {
  Tensor logits = from_vector<float>({1, 2, 3, 1, 1, 1}, {2, 3});
  std::vector<double> p = values(F::softmax(logits, 1));
  double z = std::exp(1) + std::exp(2) + std::exp(3);
  EXPECT_NEAR(p[0], std::exp(1) / z, 1e-6);
  EXPECT_NEAR(p[2], std::exp(3) / z, 1e-6);
  EXPECT_NEAR(p[4], 1.0 / 3, 1e-6);
  Tensor targets = from_vector<int64_t>({2, 0}, {2});
  double expected = (-std::log(std::exp(3) / z) - std::log(1.0 / 3)) / 2;
  EXPECT_NEAR(F::cross_entropy(logits, targets).item<double>(), expected, 1e-6);
  // ignore_index drops a row from the mean.
  Tensor ignored = from_vector<int64_t>({2, -100}, {2});
  EXPECT_NEAR(F::cross_entropy(logits, ignored).item<double>(), -std::log(std::exp(3) / z), 1e-6);
  Tensor ln = F::layer_norm(from_vector<float>({1, 2, 3, 4}, {1, 4}), {4});
  EXPECT_NEAR(ln.mean().item<double>(), 0, 1e-6);
  EXPECT_NEAR((ln * ln).mean().item<double>(), 1, 1e-4);
  EXPECT_THAT(values(F::gelu(from_vector<float>({0}, {1}))), ElementsAre(0));
  EXPECT_NEAR(F::gelu(full({1}, 1.0)).item<double>(), 0.8413447, 1e-6);
  EXPECT_NEAR(F::gelu(full({1}, 1.0), "tanh").item<double>(), 0.8411920, 1e-6);
}

TEST(Functional, CausalAttentionIgnoresTheFuture) {
  // With is_causal, changing a later key/value cannot change earlier outputs.
  Tensor q = randn({1, 4, 8}), k = randn({1, 4, 8}), v = randn({1, 4, 8});
  Tensor out = F::scaled_dot_product_attention(q, k, v, true);
  Tensor k2 = cat({k.slice(1, 0, 3), randn({1, 1, 8})}, 1);
  Tensor v2 = cat({v.slice(1, 0, 3), randn({1, 1, 8})}, 1);
  Tensor out2 = F::scaled_dot_product_attention(q, k2, v2, true);
  EXPECT_EQ(values(out.slice(1, 0, 3)), values(out2.slice(1, 0, 3)));
  EXPECT_NE(values(out.slice(1, 3, 4)), values(out2.slice(1, 3, 4)));
}

TEST(Functional, DropoutIsSeededAndScaled) {
  Tensor x = ones({10000});
  manual_seed(7);
  std::vector<double> a = values(F::dropout(x, 0.25));
  manual_seed(7);
  std::vector<double> b = values(F::dropout(x, 0.25));
  EXPECT_EQ(a, b);
  int64_t kept = 0;
  for (double v : a) {
    EXPECT_TRUE(v == 0 || std::fabs(v - 4.0 / 3.0) < 1e-6) << v;
    kept += v != 0;
  }
  EXPECT_NEAR(kept / 10000.0, 0.75, 0.02);
  EXPECT_EQ(values(F::dropout(x, 0.25, /*training=*/false)), values(x));
}

TEST(Functional, ErrorsNameTheProblem) {
  Tensor logits = zeros({2, 3});
  EXPECT_THAT(errorOf([&] {
                return F::cross_entropy(logits, from_vector<int64_t>({0, 3}, {2}));
              }),
              HasSubstr("cross_entropy: target 3 is out of range for 3 classes"));
  EXPECT_THAT(errorOf([&] { return F::cross_entropy(logits, zeros({2})); }),
              HasSubstr("cross_entropy: targets must be class indices (i32 or i64), got f32"));
  EXPECT_THAT(errorOf([&] {
                return F::linear(zeros({2, 3}), zeros({4, 5}));
              }),
              HasSubstr("linear: input [2, 3] has 3 features but weight [4, 5] expects 5"));
  EXPECT_THAT(errorOf([&] {
                return F::embedding(zeros({2}), zeros({4, 2}));
              }),
              HasSubstr("embedding: indices must be i32 or i64, got f32"));
  EXPECT_THAT(
      errorOf([&] {
        return F::layer_norm(zeros({2, 3}), {4});
      }),
      HasSubstr("layer_norm: normalized_shape [4] must be the trailing dims of the input [2, 3]"));
  EXPECT_THAT(errorOf([&] { return F::gelu(zeros({2}), "fast"); }),
              HasSubstr("gelu: approximate must be \"none\" or \"tanh\""));
  // An index out of range is found when the graph runs, and reported at the
  // line that recorded the lookup.
  int line = __LINE__ + 1;
  Tensor looked = F::embedding(from_vector<int64_t>({1, 4}, {2}), zeros({4, 2}));
  std::string message = errorOf([&] { return looked.to_vector<float>(); });
  EXPECT_THAT(message, HasSubstr("NNTest.cpp:" + std::to_string(line)));
  EXPECT_THAT(message, HasSubstr("index 4 is out of range for dimension 0 of size 4 (gather)"));
}

TEST(Layers, ParametersNamesAndInit) {
  manual_seed(1);
  nn::Linear linear(100, 50);
  auto named = linear.named_parameters();
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].first, "weight");
  EXPECT_EQ(named[0].second.shape(), (Shape{50, 100}));
  EXPECT_TRUE(named[0].second.requires_grad());
  for (double w : values(linear.weight))
    EXPECT_LE(std::fabs(w), 0.1 + 1e-7); // 1 / sqrt(100)
  auto model = models::mlp({.in_features = 4, .hidden = {8, 8}, .num_classes = 3});
  std::vector<std::string> names;
  for (auto &[name, p] : model->named_parameters())
    names.push_back(name);
  EXPECT_THAT(names, ElementsAre("0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"));
  EXPECT_EQ((*model)(zeros({5, 4})).shape(), (Shape{5, 3}));
  nn::MultiheadAttention mha(16, 4);
  EXPECT_EQ(mha.in_proj_weight.shape(), (Shape{48, 16}));
  EXPECT_EQ(mha(randn({2, 5, 16})).shape(), (Shape{2, 5, 16}));
  model->eval();
  EXPECT_FALSE(model->children()[0].second->is_training());
}

TEST(Layers, MultiheadAttentionMatchesItsDefinition) {
  // One head, identity projections: MHA is plain softmax(x x^T / sqrt(d)) x.
  nn::MultiheadAttention mha(2, 1);
  {
    NoGradGuard noGrad;
    mha.in_proj_weight.copy_(from_vector<float>({1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1}, {6, 2}));
    mha.out_proj->weight.copy_(from_vector<float>({1, 0, 0, 1}, {2, 2}));
  }
  Tensor x = from_vector<float>({1, 0, 0, 1}, {1, 2, 2});
  double a = std::exp(1 / std::sqrt(2.0)), b = 1.0;
  std::vector<double> out = values(mha(x));
  EXPECT_NEAR(out[0], a / (a + b), 1e-6);
  EXPECT_NEAR(out[1], b / (a + b), 1e-6);
}

TEST(Optim, SGDWithMomentumAndWeightDecay) {
  Tensor w = from_vector<float>({1.0, -2.0}, {2}).requires_grad_();
  optim::SGD sgd({w}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  for (int step = 0; step < 2; ++step) {
    sgd.zero_grad();
    (w * w).sum().backward(); // grad = 2w
    sgd.step();
  }
  // By hand: g1 = 2w0 + 0.01 w0 = 2.01 w0; b1 = g1; w1 = w0 - 0.1 g1 = 0.799 w0;
  // g2 = 2.01 w1; b2 = 0.9 b1 + g2; w2 = w1 - 0.1 b2.
  double w0 = 1.0, g1 = 2.01 * w0, w1 = w0 - 0.1 * g1, b2 = 0.9 * g1 + 2.01 * w1;
  EXPECT_NEAR(values(w)[0], w1 - 0.1 * b2, 1e-6);
  EXPECT_NEAR(values(w)[1], -2 * (w1 - 0.1 * b2), 1e-6);
}

TEST(Optim, AdamAndAdamWFirstSteps) {
  for (bool decoupled : {false, true}) {
    Tensor w = from_vector<float>({0.5}, {1}).requires_grad_();
    std::unique_ptr<optim::Optimizer> opt;
    if (decoupled)
      opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{w},
                                           optim::AdamWOptions{.lr = 0.1, .weight_decay = 0.1});
    else
      opt = std::make_unique<optim::Adam>(std::vector<Tensor>{w},
                                          optim::AdamOptions{.lr = 0.1, .weight_decay = 0.1});
    double p = 0.5, m = 0, v = 0;
    for (int t = 1; t <= 3; ++t) {
      opt->zero_grad();
      (w * w * w).sum().backward(); // grad = 3 w^2
      opt->step();
      double g = 3 * p * p;
      if (decoupled)
        p *= 1 - 0.1 * 0.1;
      else
        g += 0.1 * p;
      m = 0.9 * m + 0.1 * g;
      v = 0.999 * v + 0.001 * g * g;
      p -= 0.1 * (m / (1 - std::pow(0.9, t))) / (std::sqrt(v / (1 - std::pow(0.999, t))) + 1e-8);
      EXPECT_NEAR(values(w)[0], p, 1e-5) << (decoupled ? "AdamW" : "Adam") << " step " << t;
    }
  }
}

TEST(Optim, AdamWDefaultsAndPerParameterSteps) {
  Tensor a = from_vector<float>({1.0}, {1}).requires_grad_();
  Tensor b = from_vector<float>({1.0}, {1}).requires_grad_();
  optim::AdamW adamw({a, b}, {.lr = 0.1}); // weight_decay keeps its 0.01 default
  adamw.zero_grad();
  (a * 2).sum().backward(); // only a has a gradient at step 1
  adamw.step();
  // Step 1 of Adam moves by lr (bias-corrected m / sqrt(v) = 1), after decay.
  EXPECT_NEAR(values(a)[0], 1.0 * (1 - 0.1 * 0.01) - 0.1, 1e-6);
  EXPECT_EQ(values(b)[0], 1.0);
  adamw.zero_grad();
  (b * 2).sum().backward(); // b's first step: its own bias correction
  adamw.step();
  EXPECT_NEAR(values(b)[0], 1.0 * (1 - 0.1 * 0.01) - 0.1, 1e-6);
}

TEST(Optim, ClipGradNormAndSchedules) {
  Tensor a = from_vector<float>({3}, {1}).requires_grad_();
  Tensor b = from_vector<float>({4}, {1}).requires_grad_();
  (a * 1 + b * 1).sum().backward();
  (a * 2 + b * 3).sum().backward(); // grads 3 and 4: norm 5
  Tensor norm = optim::clip_grad_norm_({a, b}, 1.0);
  EXPECT_NEAR(norm.item<double>(), 5.0, 1e-6);
  EXPECT_NEAR(a.grad().item<double>(), 3.0 / 5.0, 1e-5);
  EXPECT_NEAR(b.grad().item<double>(), 4.0 / 5.0, 1e-5);

  optim::SGD sgd({a}, {.lr = 1.0});
  optim::WarmupCosine schedule(sgd, 2, 10, 0.1);
  EXPECT_NEAR(sgd.lr(), 0.5, 1e-12);
  schedule.step();
  EXPECT_NEAR(sgd.lr(), 1.0, 1e-12);
  for (int i = 0; i < 4; ++i)
    schedule.step();
  EXPECT_NEAR(sgd.lr(), 0.1 + 0.45 * (1 + std::cos(M_PI * 3 / 8)), 1e-12);
  for (int i = 0; i < 10; ++i)
    schedule.step();
  EXPECT_NEAR(sgd.lr(), 0.1, 1e-12);
  optim::LinearWarmup warmup(sgd, 4);
  EXPECT_NEAR(sgd.lr(), 0.025, 1e-12);
}

TEST(Optim, RejectsBadArguments) {
  Tensor frozen = ones({2});
  EXPECT_THAT(errorOf([&] { optim::SGD sgd({frozen}); }),
              HasSubstr("optimizer: parameter #0 does not require grad"));
  Tensor w = ones({2}).requires_grad_();
  EXPECT_THAT(errorOf([&] { optim::Adam adam({w}, {.beta1 = 1.0}); }),
              HasSubstr("Adam: betas must be in [0, 1)"));
  EXPECT_THAT(errorOf([&] { w.copy_(zeros({2})); }),
              HasSubstr("copy_: in-place update of a tensor that requires grad"));
}

TEST(Models, ShapesAndParameterCounts) {
  manual_seed(0);
  models::GPTConfig tiny{.vocab_size = 50, .context = 8, .layers = 2, .heads = 2, .d_model = 16};
  models::GPT gpt(tiny);
  Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(gpt(ids).shape(), (Shape{2, 3, 50}));
  int64_t count = 0;
  for (const Tensor &p : gpt.parameters())
    count += p.numel();
  // wte + wpe + per block (2 LN, attn in/out, fc, proj) + ln_f.
  int64_t d = 16, block = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) +
                          (4 * d * d + d);
  EXPECT_EQ(count, 50 * d + 8 * d + 2 * block + 2 * d);
  EXPECT_THAT(errorOf([&] {
                return gpt(zeros({1, 9}, DType::i64));
              }),
              HasSubstr("GPT: sequence length 9 exceeds the model's 8 positions"));
  auto le = models::lenet();
  EXPECT_EQ((*le)(zeros({2, 1, 28, 28})).shape(), (Shape{2, 10}));
  auto resnet = models::resnet18(10);
  EXPECT_EQ((*resnet)(zeros({2, 3, 8, 8})).shape(), (Shape{2, 10}));
  int64_t resnetParams = 0;
  for (const Tensor &p : resnet->parameters())
    resnetParams += p.numel();
  EXPECT_EQ(resnetParams, 11173962); // torchvision's resnet18 with a 3x3 stem and 10 classes
  models::BERT bert({.vocab_size = 50,
                     .max_positions = 8,
                     .layers = 1,
                     .heads = 2,
                     .d_model = 16,
                     .num_classes = 3});
  EXPECT_EQ(bert(ids).shape(), (Shape{2, 3}));
  // The published sizes: GPT-2 small has 124M parameters (tied embeddings),
  // BERT-base 109,482,240 plus our 2-class head. Counting records no values.
  auto countOf = [](const nn::Module &m) {
    int64_t n = 0;
    for (const Tensor &p : m.parameters())
      n += p.numel();
    return n;
  };
  EXPECT_EQ(countOf(models::GPT(models::GPTConfig::named("gpt2"))), 124439808);
  EXPECT_EQ(countOf(models::BERT(models::BERTConfig::named("bert-base"))), 109482240 + 768 * 2 + 2);
  EXPECT_THAT(errorOf([] { return models::GPTConfig::named("gpt5"); }),
              HasSubstr("unknown GPT config 'gpt5'"));
}

TEST(Training, StepsDoNotKeepEarlierGraphsAlive) {
  // A step's graph must die with the step: a gradient function holding its
  // own result (a reference cycle), or a parameter handle that mark_step()
  // does not cut, would keep every earlier graph alive. After the first
  // steps, the number of live nodes must stop growing.
  manual_seed(5);
  models::GPT gpt({.vocab_size = 32, .context = 8, .layers = 1, .heads = 2, .d_model = 8});
  optim::AdamW adamw(gpt.parameters());
  Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 8});
  std::vector<int64_t> live;
  for (int step = 0; step < 6; ++step) {
    adamw.zero_grad();
    Tensor loss = F::cross_entropy(gpt(ids).reshape({8, 32}), ids.reshape({8}));
    loss.backward();
    adamw.step();
    mark_step();
    live.push_back(reference::live_node_count());
  }
  EXPECT_EQ(live[3], live[5]) << "live nodes after steps 4 and 6: " << live[3] << ", " << live[5];
}

TEST(Training, StepStructureIsStableAndChangesAreExplained) {
  // A training step with dropout, AdamW and a learning-rate schedule records
  // the same structure every step after the first two (the first creates the
  // optimizer state): the compiled program would be reused. A changed batch
  // size is a new structure, reported with the input that changed.
  manual_seed(11);
  auto model = models::mlp({.in_features = 6, .hidden = {8}, .num_classes = 3, .dropout = 0.1});
  optim::AdamW adamw(model->parameters(), {.lr = 0.01});
  optim::WarmupCosine schedule(adamw, 2, 20);
  mark_step(); // the initialisation
  reset_metrics();
  auto step = [&](int64_t batch) {
    adamw.zero_grad();
    Tensor x = randn({batch, 6});
    Tensor y = from_vector<int64_t>(std::vector<int64_t>(batch, 1), {batch});
    F::cross_entropy((*model)(x), y).backward();
    adamw.step();
    schedule.step();
    mark_step(); // one call site: this line
  };
  for (int i = 0; i < 5; ++i)
    step(4);
  Metrics m = metrics();
  EXPECT_EQ(m.steps, 5);
  EXPECT_EQ(m.distinct_graphs, 2) << metrics_report();
  EXPECT_EQ(m.repeated_graphs, 3);
  step(5);
  m = metrics();
  EXPECT_EQ(m.distinct_graphs, 3);
  ASSERT_FALSE(m.recompile_reasons.empty());
  EXPECT_THAT(m.recompile_reasons.back(), HasSubstr("NNTest.cpp"));
  EXPECT_THAT(m.recompile_reasons.back(), HasSubstr("has shape [5"));
  EXPECT_THAT(m.recompile_reasons.back(), HasSubstr("was [4"));
  EXPECT_THAT(metrics_report(), HasSubstr("distinct graphs: 3"));
}

TEST(Training, MLPLearnsXor) {
  // A real (if tiny) learning problem: XOR is not linearly separable.
  manual_seed(3);
  auto model = models::mlp({.in_features = 2, .hidden = {16}, .num_classes = 2});
  optim::Adam adam(model->parameters(), {.lr = 0.05});
  Tensor x = from_vector<float>({0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  Tensor y = from_vector<int64_t>({0, 1, 1, 0}, {4});
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    adam.zero_grad();
    Tensor loss = F::cross_entropy((*model)(x), y);
    loss.backward();
    adam.step();
    mark_step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.05 * first);
  EXPECT_THAT((*model)(x).argmax(1).to_vector<int64_t>(), ElementsAre(0, 1, 1, 0));
}

} // namespace
} // namespace sinter
