//===- AotScratch.h - where the AOT tests write their files ---------------===//
#ifndef SINTER_TESTS_AOTSCRATCH_H
#define SINTER_TESTS_AOTSCRATCH_H

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace sinter {

/// A path for `name` in this process's scratch folder (aot-<pid> in the
/// test's temporary folder), which is removed with everything in it when the
/// process exits.
inline std::string scratchPath(const std::string &name) {
  static const struct Folder {
    std::string path = ::testing::TempDir() + "/aot-" + std::to_string(getpid());
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } folder;
  return folder.path + "/" + name;
}

} // namespace sinter

#endif // SINTER_TESTS_AOTSCRATCH_H
