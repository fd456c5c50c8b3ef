//===- GpuRequired.h - whether a test run must have a GPU -----------------===//
//
// Tests that need a GPU skip without one, with the reason, unless the run
// says it has one: SINTER_EXPECT_CUDA=1 (tools/gpu_check.sh sets it), so
// that a GPU machine whose driver fails fails the tests instead of skipping
// them.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TESTS_COMMON_GPUREQUIRED_H
#define SINTER_TESTS_COMMON_GPUREQUIRED_H

#include <cstdlib>
#include <string>

namespace sinter::test_support {

inline bool gpuRequired() {
  const char *expect = std::getenv("SINTER_EXPECT_CUDA");
  return expect != nullptr && std::string(expect) == "1";
}

} // namespace sinter::test_support

#endif // SINTER_TESTS_COMMON_GPUREQUIRED_H
