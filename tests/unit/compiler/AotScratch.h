//===- AotScratch.h - where the AOT tests write their files ---------------===//
#ifndef SINTER_TESTS_AOTSCRATCH_H
#define SINTER_TESTS_AOTSCRATCH_H

#include <gtest/gtest.h>

#include <string>

#include <unistd.h>

namespace sinter {

/// A path for `name` in the test's scratch folder, unique to this process.
inline std::string scratchPath(const std::string &name) {
  return testing::TempDir() + "/aot-" + std::to_string(getpid()) + "-" + name;
}

} // namespace sinter

#endif // SINTER_TESTS_AOTSCRATCH_H
