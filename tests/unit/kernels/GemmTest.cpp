//===- GemmTest.cpp - matrix products from their descriptors --------------===//
//
// Every way a descriptor can ask for a product (each transpose, batches with
// their own and with shared operands, beta = 1 accumulation, the bias
// epilogue, an empty inner dimension), run by kernels/cpu/gemm.h (what every
// CPU kernel library exports) with both host libraries, on one thread and on
// all, against a plain column-major loop in double precision; then the
// row-major mapping the compiler uses. CpuKernelTest.cpp runs Programs of
// library calls through the CPU executable.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Gemm.h"
#include "common/GemmReference.h"

#include "cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace sinter::runtime {
namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = uniform(rng);
  return v;
}

/// Elements an operand needs: rows x cols stored with leading dim ld, per matrix.
size_t spanOf(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  return static_cast<size_t>((batch - 1) * stride + (cols - 1) * ld + rows);
}

struct Case {
  bool transa, transb;
  int64_t m, n, k, batch;
  bool sharedA, sharedB;
  float beta;
  bool bias;
};

void expectMatchesReference(const Case &t, HostGemmChoice choice) {
  Gemm g;
  g.transa = t.transa, g.transb = t.transb;
  g.m = t.m, g.n = t.n, g.k = t.k, g.batch = t.batch;
  // Leading dimensions a little larger than the rows: the products must
  // honour them, not assume packed matrices.
  g.lda = (t.transa ? t.k : t.m) + 3;
  g.ldb = (t.transb ? t.n : t.k) + 1;
  g.ldc = t.m + 2;
  int64_t aCols = t.transa ? t.m : t.k, bCols = t.transb ? t.k : t.n;
  g.strideA = t.sharedA ? 0 : g.lda * aCols;
  g.strideB = t.sharedB ? 0 : g.ldb * bCols;
  g.strideC = g.ldc * t.n;
  g.beta = t.beta;
  g.epilogue = t.bias ? Gemm::Epilogue::Bias : Gemm::Epilogue::None;
  ASSERT_TRUE(checkGemm(g).ok()) << checkGemm(g);
  std::vector<float> a = randomFloats(spanOf(g.lda, aCols, g.lda, g.batch, g.strideA), 1);
  std::vector<float> b = randomFloats(spanOf(g.ldb, bCols, g.ldb, g.batch, g.strideB), 2);
  std::vector<float> c = randomFloats(spanOf(g.ldc, g.n, g.ldc, g.batch, g.strideC), 3);
  std::vector<float> bias = randomFloats(static_cast<size_t>(g.m), 4);
  std::vector<float> want = test_support::gemmReference(g, a, b, c, bias);
  runGemmOnHost(&sinter_gemm_v1, g, choice, a.data(), b.data(), c.data(), bias.data());
  int64_t wrong = 0;
  double worst = 0;
  for (size_t e = 0; e < c.size(); ++e) {
    double diff = std::fabs(double(c[e]) - double(want[e]));
    worst = std::max(worst, diff);
    // Sums of k products of numbers below 1 in f32: a few ulps of k.
    wrong += !(diff <= 1e-5 * (static_cast<double>(t.k) + 1));
  }
  EXPECT_EQ(wrong, 0) << describe(g) << (choice.openBlas ? " openblas" : " onednn")
                      << (choice.oneThread ? " one thread" : "") << ": worst difference " << worst;
}

TEST(Gemm, EveryTransposeBatchBetaAndEpilogueMatchesTheDefinition) {
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ta, tb, 7, 5, 9, 1, false, false, 0.0f, false});
      cases.push_back({ta, tb, 33, 17, 65, 1, false, false, 1.0f, false}); // accumulate
      cases.push_back({ta, tb, 16, 8, 12, 1, false, false, 0.0f, true});   // bias
      cases.push_back({ta, tb, 6, 10, 4, 3, false, false, 0.0f, false});   // a batch
      cases.push_back({ta, tb, 6, 10, 4, 3, true, false, 0.0f, false});    // shared A
      cases.push_back({ta, tb, 6, 10, 4, 3, false, true, 1.0f, true});     // shared B
    }
  for (const Case &t : cases)
    for (HostGemmChoice choice : {HostGemmChoice{false, false}, HostGemmChoice{false, true},
                                  HostGemmChoice{true, false}, HostGemmChoice{true, true}})
      expectMatchesReference(t, choice);
}

TEST(Gemm, AnEmptyInnerDimensionScalesTheOutputByBeta) {
  for (float beta : {0.0f, 1.0f})
    for (bool bias : {false, true})
      expectMatchesReference({false, false, 5, 4, 0, 2, false, false, beta, bias},
                             HostGemmChoice{false, false});
}

TEST(Gemm, RowMajorProductsMapOntoTheColumnMajorCall) {
  // Row-major C[M x N] = op(X) op(W), X [M x K] or [K x M], W [K x N] or [N x K].
  const int64_t M = 5, N = 7, K = 3, batch = 2;
  for (bool tx : {false, true})
    for (bool tw : {false, true})
      for (bool shared : {false, true}) {
        std::vector<float> x = randomFloats(static_cast<size_t>(batch * M * K), 5);
        std::vector<float> w = randomFloats(static_cast<size_t>((shared ? 1 : batch) * K * N), 6);
        std::vector<float> c(static_cast<size_t>(batch * M * N), -7.0f);
        Gemm g = gemmOfRowMajor(tx, tw, M, N, K, batch, shared);
        ASSERT_TRUE(checkGemm(g).ok()) << checkGemm(g);
        runGemmOnHost(&sinter_gemm_v1, g, {}, w.data(), x.data(), c.data());
        for (int64_t z = 0; z < batch; ++z)
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              double sum = 0;
              for (int64_t p = 0; p < K; ++p) {
                double xv = tx ? x[z * M * K + p * M + i] : x[z * M * K + i * K + p];
                int64_t wz = shared ? 0 : z * K * N;
                double wv = tw ? w[wz + j * K + p] : w[wz + p * N + j];
                sum += xv * wv;
              }
              EXPECT_NEAR(c[z * M * N + i * N + j], sum, 1e-5)
                  << "tx " << tx << " tw " << tw << " shared " << shared << " at " << z << "," << i
                  << "," << j << " (" << describe(g) << ")";
            }
      }
}

TEST(Gemm, ADescriptorThatDoesNotFitIsRefusedByName) {
  Gemm g = gemmOfRowMajor(false, false, 4, 8, 16, 1, false);
  g.lda = 3; // A is 8 x 16 column-major: lda must be at least 8
  Status status = checkGemm(g);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("lda is 3, less than the 8 rows"), std::string::npos) << status;
  g = gemmOfRowMajor(false, false, 4, 8, 16, 2, false);
  g.strideC = 8;
  status = checkGemm(g);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("the batch's results overlap"), std::string::npos) << status;
}

} // namespace
} // namespace sinter::runtime
