//===- LibraryKernelsTest.cpp - kernels/cpu's loops against the reference --===//
//
// The loops that generated kernels call for the ops fusion leaves alone
// (kernels/cpu/conv2d.h, pool2d.h, gather.h, concat.h, argmax.h), called
// directly with shapes as the compiler writes them, against the reference
// executor's results for the same op (the frontend computes them, no compiler
// installed). Each convolution runs with every choice the compiler can make
// for it: images per product, a transposed filter gradient, either library,
// one thread or all. CpuKernelTest.cpp checks the kernels the compiler
// renders around these calls.
//
//===----------------------------------------------------------------------===//
#include "cpu/argmax.h"
#include "cpu/concat.h"
#include "cpu/conv2d.h"
#include "cpu/gather.h"
#include "cpu/pool2d.h"

#include "sinter/nn/Functional.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace sinter {
namespace {

namespace F = nn::functional;

/// Element by element: equal, both NaN, or (tolerance > 0) within
/// tolerance * (1 + |expected|).
void expectClose(const std::vector<float> &actual, const std::vector<float> &expected,
                 double tolerance, const char *what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual[i])) << what << " [" << i << "]";
      continue;
    }
    EXPECT_LE(std::abs(double(actual[i]) - double(expected[i])),
              tolerance * (1 + std::abs(double(expected[i]))))
        << what << " [" << i << "]: " << actual[i] << ", the reference " << expected[i];
  }
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

// input [4, 4, 7, 6], filters [6, 2, 3, 3] in 2 groups, stride (2, 1),
// padding (1, 2), dilation (1, 2): output [4, 6, 4, 6].
constexpr sinter_conv2d_shape conv(int64_t images, bool transposed, bool openBlas, bool oneThread) {
  return {4, 4, 7, 6, 6, 3, 3, 4, 6, 2, 1, 1, 2, 1, 2, 2, images, transposed, openBlas, oneThread};
}
constexpr sinter_conv2d_shape kConvA = conv(1, false, false, false);
constexpr sinter_conv2d_shape kConvB = conv(2, true, false, true);
constexpr sinter_conv2d_shape kConvC = conv(4, false, true, false);
constexpr sinter_conv2d_shape kConvD = conv(2, true, true, true);
// An empty batch: every result is zeros, no scratch is touched.
constexpr sinter_conv2d_shape kConvEmpty = {0, 4, 7, 6, 6, 3, 3, 4,     6,     2,
                                            1, 1, 2, 1, 2, 2, 1, false, false, false};

struct ConvReference {
  std::vector<float> input, filters, gradOutput, output, gradInput, gradFilters;
};

ConvReference convReference(const sinter_conv2d_shape &s) {
  manual_seed(7);
  Tensor x = randn({s.batch, s.channels, s.height, s.width}).requires_grad_();
  Tensor w = randn({s.filters, s.channels / s.groups, s.kernel_h, s.kernel_w}).requires_grad_();
  Tensor y = F::conv2d(x, w, Tensor(), {s.stride_y, s.stride_x}, {s.pad_y, s.pad_x},
                       {s.dilation_y, s.dilation_x}, s.groups);
  EXPECT_EQ(y.shape(), (Shape{s.batch, s.filters, s.out_h, s.out_w}));
  Tensor gy = randn(y.shape());
  y.backward(gy);
  return {x.to_vector<float>(), w.to_vector<float>(),        gy.to_vector<float>(),
          y.to_vector<float>(), x.grad().to_vector<float>(), w.grad().to_vector<float>()};
}

template <const sinter_conv2d_shape &S> void checkConv(const char *what) {
  SCOPED_TRACE(what);
  ConvReference ref = convReference(S);
  const int64_t og = S.filters / S.groups, k = S.channels / S.groups * S.kernel_h * S.kernel_w,
                n = S.images * S.out_h * S.out_w;
  // Scratch as the compiler sizes it, filled with NaN: a loop that reads
  // scratch it did not write shows.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> col(k * n, nan), aux(og * n, nan), wt(S.groups * og * k, nan);
  std::vector<float> out(ref.output.size(), nan), gin(ref.gradInput.size(), nan),
      gw(ref.gradFilters.size(), nan);
  sinter_conv2d<S>(ref.input.data(), ref.filters.data(), out.data(), col.data(), aux.data());
  expectClose(out, ref.output, 2e-5, "conv2d");
  sinter_conv2d_backward_input<S>(ref.gradOutput.data(), ref.filters.data(), gin.data(), col.data(),
                                  aux.data());
  expectClose(gin, ref.gradInput, 2e-5, "conv2d_backward_input");
  sinter_conv2d_backward_filter<S>(ref.input.data(), ref.gradOutput.data(), gw.data(), col.data(),
                                   aux.data(), wt.data());
  expectClose(gw, ref.gradFilters, 2e-5, "conv2d_backward_filter");
}

TEST(LibraryKernels, ConvolutionsEqualTheReferenceUnderEveryChoice) {
  checkConv<kConvA>("one image per product, oneDNN, all threads");
  checkConv<kConvB>("two images per product, transposed filter gradient, oneDNN, one thread");
  checkConv<kConvC>("the whole batch in one product, OpenBLAS, all threads");
  checkConv<kConvD>("two images per product, transposed filter gradient, OpenBLAS, one thread");
}

TEST(LibraryKernels, AnEmptyBatchWritesZerosAndTouchesNoScratch) {
  const auto &s = kConvEmpty;
  std::vector<float> filters(s.filters * 2 * 9, 1.0f), gw(filters.size(), 5.0f);
  sinter_conv2d_backward_filter<kConvEmpty>(nullptr, nullptr, gw.data(), nullptr, nullptr, nullptr);
  EXPECT_EQ(gw, std::vector<float>(filters.size(), 0.0f));
  sinter_conv2d<kConvEmpty>(nullptr, filters.data(), nullptr, nullptr, nullptr);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// [2, 3, 7, 8] in windows of 3x2, stride (2, 3), padding (1, 1): [2, 3, 4, 3].
constexpr sinter_pool2d_shape kMaxPool = {6, 7, 8, 4, 3, 3, 2, 2, 3, 1, 1, true};
constexpr sinter_pool2d_shape kAvgPool = {6, 7, 8, 4, 3, 3, 2, 2, 3, 1, 1, false};

template <const sinter_pool2d_shape &S> void checkPool(const char *what) {
  SCOPED_TRACE(what);
  manual_seed(11);
  std::vector<float> input = randn({2, 3, S.height, S.width}).to_vector<float>();
  // Row 1, column 6: the last element of its window, which a NaN wins.
  input[14] = std::numeric_limits<float>::quiet_NaN();
  input[38] = input[37] = 5.0f; // row 4, columns 5 and 6 of one window: the first wins
  Tensor x = from_vector(input, {2, 3, S.height, S.width}).requires_grad_();
  Tensor y = S.max ? F::max_pool2d(x, {S.kernel_h, S.kernel_w}, {S.stride_y, S.stride_x},
                                   {S.pad_y, S.pad_x})
                   : F::avg_pool2d(x, {S.kernel_h, S.kernel_w}, {S.stride_y, S.stride_x},
                                   {S.pad_y, S.pad_x});
  ASSERT_EQ(y.shape(), (Shape{2, 3, S.out_h, S.out_w}));
  Tensor gy = randn(y.shape());
  y.backward(gy);
  std::vector<float> grad = gy.to_vector<float>();
  std::vector<float> out(y.numel(), -1.0f), gin(x.numel(), -1.0f);
  sinter_pool2d<S>(input.data(), out.data());
  sinter_pool2d_backward<S>(input.data(), grad.data(), gin.data());
  // Max pooling picks values and adds whole gradients; an average sums
  // scaled values, in the reference's order or another.
  double tolerance = S.max ? 0 : 1e-6;
  expectClose(out, y.to_vector<float>(), tolerance, "pool2d");
  expectClose(gin, x.grad().to_vector<float>(), S.max ? 1e-7 : tolerance, "pool2d_backward");
}

TEST(LibraryKernels, PoolingEqualsTheReference) {
  checkPool<kMaxPool>("max, with a NaN and a tie");
  checkPool<kAvgPool>("average, padding counted");
}

//===----------------------------------------------------------------------===//
// Gather, scatter-add, concat, argmax
//===----------------------------------------------------------------------===//

TEST(LibraryKernels, GatherAndScatterAddEqualTheReference) {
  // A table [3, 5, 4] gathered along axis 1 by indices [2, 3] (repeats).
  manual_seed(3);
  Tensor table = randn({3, 5, 4}).requires_grad_();
  std::vector<int64_t> indices = {4, 0, 2, 2, 1, 4};
  Tensor index = from_vector(indices, {2, 3});
  Tensor y = index_select(table, 1, index);
  ASSERT_EQ(y.shape(), (Shape{3, 2, 3, 4}));
  Tensor gy = randn(y.shape());
  y.backward(gy);
  std::vector<float> t = table.to_vector<float>(), g = gy.to_vector<float>();
  std::vector<float> out(y.numel(), -1.0f);
  sinter_gather<3, 6, 5, 4>(t.data(), indices.data(), out.data());
  expectClose(out, y.to_vector<float>(), 0, "gather");
  // The gradient is a scatter-add of gy into zeros.
  std::vector<float> zeros(t.size(), 0.0f), added(t.size(), -1.0f);
  sinter_scatter_add<3, 6, 5, 4>(zeros.data(), indices.data(), g.data(), added.data());
  expectClose(added, table.grad().to_vector<float>(), 1e-7, "scatter_add");
}

TEST(LibraryKernels, IndicesOutOfRangeReadZerosAndAddNothing) {
  std::vector<float> table = {1, 2, 3, 4}, values = {10, 20, 30}, out(3, -1.0f);
  std::vector<int32_t> indices = {3, -1, 4};
  sinter_gather<1, 3, 4, 1>(table.data(), indices.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{4, 0, 0}));
  std::vector<float> added(4, -1.0f);
  sinter_scatter_add<1, 3, 4, 1>(table.data(), indices.data(), values.data(), added.data());
  EXPECT_EQ(added, (std::vector<float>{1, 2, 3, 14}));
}

TEST(LibraryKernels, ConcatEqualsTheReference) {
  manual_seed(5);
  Tensor a = randn({2, 3, 4}), b = randn({2, 1, 4}), c = randn({2, 2, 4});
  Tensor y = cat({a, b, c}, 1);
  std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>(),
                     vc = c.to_vector<float>(), out(y.numel(), -1.0f);
  sinter_concat_part<2, 3, 4, 6, 0>(va.data(), out.data());
  sinter_concat_part<2, 1, 4, 6, 3>(vb.data(), out.data());
  sinter_concat_part<2, 2, 4, 6, 4>(vc.data(), out.data());
  expectClose(out, y.to_vector<float>(), 0, "concat");
}

TEST(LibraryKernels, ArgmaxEqualsTheReference) {
  manual_seed(9);
  std::vector<float> input = randn({3, 5, 2}).to_vector<float>();
  input[2] = std::numeric_limits<float>::quiet_NaN(); // [0, 1, 0]: a NaN wins
  input[13] = input[15] = 9.0f;                       // [1, 1, 1] and [1, 2, 1]: a tie
  Tensor y = argmax(from_vector(input, {3, 5, 2}), 1);
  std::vector<int64_t> out(6, -1);
  sinter_argmax<3, 5, 2>(input.data(), out.data());
  EXPECT_EQ(out, y.to_vector<int64_t>());
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[3], 1);
}

} // namespace
} // namespace sinter
