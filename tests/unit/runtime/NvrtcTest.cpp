//===- NvrtcTest.cpp - NVRTC, opened at first use -------------------------===//
//
// Note [Lazy NVRTC]. NVRTC needs no GPU: where the CUDA toolkit is installed
// (CI), ctest sets SINTER_EXPECT_NVRTC=1 and these tests cannot skip;
// NvrtcMissing runs in its own process with SINTER_NVRTC naming no library
// (tests/unit/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Nvrtc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace sinter::cuda {
namespace {

using ::testing::HasSubstr;

bool expected() {
  const char *expect = std::getenv("SINTER_EXPECT_NVRTC");
  return expect != nullptr && std::string(expect) == "1";
}

#define REQUIRE_NVRTC()                                                                            \
  do {                                                                                             \
    StatusOr<std::string> version = nvrtcVersion();                                                \
    if (!version.ok()) {                                                                           \
      ASSERT_FALSE(expected()) << version.status();                                                \
      GTEST_SKIP() << version.status();                                                            \
    }                                                                                              \
  } while (false)

constexpr const char *kKernel = R"(#include "common/scalar.h"
extern "C" __global__ void softplus(const float *x, float *y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = sinter_select<float>(x[i] > 20.0f, x[i], logf(1.0f + sinter_exp(x[i])));
}
)";

TEST(Nvrtc, CompilesPtxAndCubinsWithTheKernelHelpers) {
  if (std::getenv("SINTER_NVRTC") != nullptr)
    GTEST_SKIP() << "SINTER_NVRTC is set";
  REQUIRE_NVRTC();
  EXPECT_THAT(*nvrtcVersion(), ::testing::MatchesRegex("[0-9]+\\.[0-9]+"));
  for (const char *arch : {"80", "90"}) {
    std::string log;
    StatusOr<std::string> ptx = compileWithNvrtc({.path = "softplus.cu",
                                                  .source = kKernel,
                                                  .arch = arch,
                                                  .output = NvrtcOutput::Ptx,
                                                  .includeDirs = {SINTER_KERNELS_DIR}},
                                                 &log);
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    EXPECT_THAT(*ptx, HasSubstr(std::string(".target sm_") + arch));
    EXPECT_THAT(*ptx, HasSubstr(".entry softplus"));
    EXPECT_NE(ptx->back(), '\0');
    StatusOr<std::string> cubin = compileWithNvrtc({.path = "softplus.cu",
                                                    .source = kKernel,
                                                    .arch = arch,
                                                    .output = NvrtcOutput::Cubin,
                                                    .includeDirs = {SINTER_KERNELS_DIR}});
    ASSERT_TRUE(cubin.ok()) << cubin.status();
    ASSERT_GT(cubin->size(), 4u);
    EXPECT_EQ(cubin->substr(0, 4), "\x7f"
                                   "ELF")
        << "sm_" << arch << ": not an ELF cubin";
  }
}

TEST(Nvrtc, ACompileErrorNamesTheFileAndHoldsTheLog) {
  if (std::getenv("SINTER_NVRTC") != nullptr)
    GTEST_SKIP() << "SINTER_NVRTC is set";
  REQUIRE_NVRTC();
  std::string log;
  StatusOr<std::string> bad = compileWithNvrtc(
      {.path = "fusion_7.cu",
       .source = "extern \"C\" __global__ void k(float *y) { y[0] = undeclared; }\n",
       .arch = "90",
       .output = NvrtcOutput::Ptx,
       .includeDirs = {}},
      &log);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(bad.status().message());
  EXPECT_THAT(message, HasSubstr("NVRTC could not compile fusion_7.cu for compute_90"));
  EXPECT_THAT(message, HasSubstr("undeclared"));
  EXPECT_THAT(log, HasSubstr("fusion_7.cu"));
  // A missing helper header is named too.
  StatusOr<std::string> missing = compileWithNvrtc({.path = "k.cu",
                                                    .source = "#include \"common/scalar.h\"\n",
                                                    .arch = "90",
                                                    .output = NvrtcOutput::Ptx,
                                                    .includeDirs = {}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("common/scalar.h"));
}

TEST(NvrtcMissing, SaysWhichLibraryAndWhatToInstall) {
  const char *library = std::getenv("SINTER_NVRTC");
  if (library == nullptr)
    GTEST_SKIP() << "run by ctest with SINTER_NVRTC set";
  for (Status status : {nvrtcVersion().status(), compileWithNvrtc({.path = "k.cu",
                                                 .source = "",
                                                 .arch = "90",
                                                 .output = NvrtcOutput::Ptx,
                                                 .includeDirs = {}})
                                                     .status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    std::string message(status.message());
    EXPECT_THAT(message, HasSubstr("NVRTC, which compiles the CUDA kernels, could not be loaded"));
    EXPECT_THAT(message, HasSubstr(library));
    EXPECT_THAT(message, HasSubstr("SINTER_NVRTC"));
  }
}

} // namespace
} // namespace sinter::cuda
