//===- CheckNumericsTest.cpp - NaNs traced to the kernel and line ---------===//
//
// Note [Checked numerics] in sinter/runtime/Program.h: with check_numerics,
// the first kernel that writes a NaN stops the step, in compiled and in eager
// mode, and mark_step() throws an error that names the step, the kernel, its
// ops and the user's line; without it, the NaN is computed and returned.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/StepCompiler.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace {

using namespace sinter;

/// The message mark_step() throws under `config`, or "" when it runs.
std::string stepError(const CompilerConfig &config, const std::function<Tensor()> &record,
                      bool &nanResult) {
  compiler::install();
  Session::Use session({.compiler = config});
  Tensor result = record();
  std::string message;
  try {
    mark_step();
    std::vector<float> values = result.to_vector<float>();
    nanResult = std::any_of(values.begin(), values.end(), [](float v) { return std::isnan(v); });
  } catch (const Error &error) {
    message = error.what();
  }
  return message;
}

int lineOfLog = 0;

Tensor logOfANegative() {
  Tensor x = from_vector<float>({1.0f, -2.0f, 3.0f, 4.0f}, {2, 2});
  Tensor y = x * 2.0;
  lineOfLog = __LINE__ + 1;
  Tensor z = y.log();
  return z.sum();
}

TEST(CheckNumerics, TheFirstNaNStopsACompiledStepAtItsKernelAndLine) {
  bool nan = false;
  std::string message = stepError({.enabled = true, .check_numerics = 1}, logOfANegative, nan);
  ASSERT_FALSE(message.empty()) << "the step ran with a NaN and no error";
  EXPECT_NE(message.find("CheckNumericsTest.cpp:"), std::string::npos) << message;
  EXPECT_NE(message.find("mark_step: step "), std::string::npos) << message;
  EXPECT_NE(message.find("log"), std::string::npos) << message;
  // The whole step is one kernel: it names every line its ops come from,
  // the log's among them.
  EXPECT_NE(
      message.find("its ops come from CheckNumericsTest.cpp:" + std::to_string(lineOfLog - 2) +
                   ", CheckNumericsTest.cpp:" + std::to_string(lineOfLog)),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("wrote NaN at element"), std::string::npos) << message;
}

TEST(CheckNumerics, EagerStepsStopAtTheOpThatMadeTheNaN) {
  bool nan = false;
  std::string message = stepError({.enabled = false, .check_numerics = 1}, logOfANegative, nan);
  ASSERT_FALSE(message.empty()) << "the step ran with a NaN and no error";
  // Each op is its own kernel: the log, at its line, element 1 (log(-4)).
  EXPECT_NE(message.find("(fusion(log) f32[2x2] <- CheckNumericsTest.cpp:" +
                         std::to_string(lineOfLog) + ") wrote NaN at element 1 of its result 0"),
            std::string::npos)
      << message;
}

TEST(CheckNumerics, WithoutTheCheckTheNaNIsComputed) {
  for (bool enabled : {true, false}) {
    bool nan = false;
    std::string message = stepError({.enabled = enabled}, logOfANegative, nan);
    EXPECT_EQ(message, "") << (enabled ? "compiled" : "eager");
    EXPECT_TRUE(nan) << (enabled ? "compiled" : "eager");
  }
}

TEST(CheckNumerics, ANaNInTheInputsIsNamedAsComingFromOutside) {
  bool nan = false;
  std::string message = stepError(
      {.enabled = true, .check_numerics = 1},
      [] {
        Tensor x = from_vector<float>({1.0f, NAN, 3.0f, 4.0f}, {2, 2});
        mark_step(); // x is data now: an input of the next step
        return (x * 3.0).sum();
      },
      nan);
  EXPECT_NE(message.find("holds NaN at element 1 before any kernel ran"), std::string::npos)
      << message;
}

TEST(CheckNumerics, InfinitiesStopTheStepOnlyAtLevelTwo) {
  auto overflow = [] {
    Tensor x = from_vector<float>({1e30f, 2.0f}, {2});
    return (x * x).sum(); // 1e60: +inf, no NaN
  };
  bool nan = false;
  EXPECT_EQ(stepError({.enabled = true, .check_numerics = 1}, overflow, nan), "");
  std::string message = stepError({.enabled = true, .check_numerics = 2}, overflow, nan);
  EXPECT_NE(message.find("wrote +inf at element 0"), std::string::npos) << message;
}

TEST(CheckNumerics, HalfValuesAreCheckedByTheirBits) {
  // f16 and bf16 buffers are read as what they hold (Program::Buffer::
  // Floats): a NaN from a log, an infinity past bf16's range, and a NaN in
  // an input, compiled and eager.
  for (bool enabled : {true, false}) {
    SCOPED_TRACE(enabled ? "compiled" : "eager");
    bool nan = false;
    std::string message = stepError(
        {.enabled = enabled, .check_numerics = 1},
        [] {
          return (from_vector<float>({1, -2, 3, 4}, {4}).to(DType::f16) * 2.0).log();
        },
        nan);
    EXPECT_NE(message.find("wrote NaN at element 1 of its result 0 (4 f16 values)"),
              std::string::npos)
        << message;
    auto overflow = [] {
      Tensor x = from_vector<float>({1e30f, -1e30f, 2.0f}, {3}).to(DType::bf16);
      return x * 1e30;
    };
    EXPECT_EQ(stepError({.enabled = enabled, .check_numerics = 1}, overflow, nan), "");
    message = stepError({.enabled = enabled, .check_numerics = 2}, overflow, nan);
    EXPECT_NE(message.find("wrote +inf at element 0 of its result 0 (3 bf16 values)"),
              std::string::npos)
        << message;
    Tensor x;
    { // made unchecked: the conversion's f32 input holds the NaN too
      Session::Use unchecked({.compiler = {.enabled = enabled}});
      x = from_vector<float>({1.0f, 2.0f, NAN}, {3}).to(DType::bf16);
      mark_step(); // x is data now: an input of the next step
    }
    message = stepError(
        {.enabled = enabled, .check_numerics = 1}, [&] { return x * 3.0; }, nan);
    EXPECT_NE(message.find("(3 bf16 values) holds NaN at element 2 before any kernel ran"),
              std::string::npos)
        << message;
  }
}

TEST(CheckNumerics, ALevelOutOfRangeIsRefused) {
  try {
    Session session({.compiler = {.check_numerics = 3}});
    ADD_FAILURE() << "check_numerics 3 accepted";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("it must be 0 (off), 1 (NaN) or 2"), std::string::npos)
        << error.what();
  }
}

} // namespace
