//===- Helpers.h - what the io tests share ---------------------*- C++ -*-===//
#ifndef SINTER_TESTS_IO_HELPERS_H
#define SINTER_TESTS_IO_HELPERS_H

#include "sinter/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

namespace sinter::testing {

/// The message of the sinter::Error `body` throws, or "(no error)".
inline std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const Error &error) {
    return error.what();
  }
  return "(no error)";
}

/// A path under the test's temporary folder `folder` (created).
inline std::string scratch(const std::string &folder, const std::string &name) {
  std::string dir = ::testing::TempDir() + "/" + folder;
  std::filesystem::create_directories(dir);
  return dir + "/" + name;
}

} // namespace sinter::testing

#endif // SINTER_TESTS_IO_HELPERS_H
