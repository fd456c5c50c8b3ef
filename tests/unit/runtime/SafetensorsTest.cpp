//===- SafetensorsTest.cpp - the runtime's safetensors reader and writer --===//
//
// What the runtime alone (an artifact's session) reads and writes. Every
// malformed file's message is checked through the C++ API's
// io::load_safetensors (tests/unit/io/SafetensorsTest.cpp, train.bad_files).
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Safetensors.h"
#include "sinter/runtime/Files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace sinter::runtime {
namespace {

std::string bytesOf(const std::vector<float> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
}

TEST(RuntimeSafetensors, WrittenTensorsAndMetadataReadBack) {
  std::string path = testing::TempDir() + "/state-" + std::to_string(getpid()) + ".safetensors";
  std::string w = bytesOf({1, 2, 3, 4, 5, 6}), b = bytesOf({-1.5f});
  int64_t step = 42;
  std::string s(reinterpret_cast<const char *>(&step), 8);
  ASSERT_TRUE(writeSafetensors(path,
                               {{"model.0.weight", "F32", {2, 3}, w},
                                {"model.0.bias", "F32", {1}, b},
                                {"step", "I64", {}, s}},
                               {{"format", "test/1"}}, "save")
                  .ok());
  StatusOr<std::string> bytes = readWholeFile(path, "load");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  StatusOr<Safetensors> file = parseSafetensors(*bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->metadata.at("format"), "test/1");
  ASSERT_EQ(file->tensors.size(), 3u);
  // In the order of their bytes, which is the order written.
  EXPECT_EQ(file->tensors[0].name, "model.0.weight");
  EXPECT_EQ(file->tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file->data(file->tensors[0]), w);
  const SafetensorsTensor *bias = file->find("model.0.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(file->data(*bias), b);
  EXPECT_EQ(file->find("step")->dtype, "I64");
  EXPECT_EQ(file->data(*file->find("step")), s);
  EXPECT_EQ(file->find("model.1.weight"), nullptr);
  std::remove(path.c_str());
}

TEST(RuntimeSafetensors, TheWriterRefusesWhatItCannotWriteWhole) {
  std::string path = testing::TempDir() + "/refused-" + std::to_string(getpid()) + ".safetensors";
  std::string four = bytesOf({1, 2, 3, 4});
  for (const auto &[tensors, words] :
       std::vector<std::pair<std::vector<SafetensorsWrite>, std::string>>{
           {{{"x", "F32", {3}, four}}, "save: tensor 'x' is F32[3] but 16 bytes"},
           {{{"x", "F16", {8}, four}}, "save: tensor 'x' is F16[8] but 16 bytes"},
           {{{"x", "F32", {4}, four}, {"x", "F32", {4}, four}}, "save: two tensors are named 'x'"},
           {{{"", "F32", {4}, four}}, "save: invalid tensor name ''"},
       }) {
    Status written = writeSafetensors(path, tensors, {}, "save");
    ASSERT_FALSE(written.ok()) << words;
    EXPECT_NE(written.message().find(words), std::string::npos) << written;
    EXPECT_FALSE(readWholeFile(path, "load").ok()) << "a refused write left a file";
  }
  Status folder = writeSafetensors(testing::TempDir() + "/no/such/folder/x.safetensors",
                                   {{"x", "F32", {4}, four}}, {}, "save");
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.message().find("save: cannot create"), std::string::npos) << folder;
}

TEST(AtomicFiles, ThreadsWritingOnePathEachRenameWholeBytes) {
  // Two sessions saving to one file from two threads: each write has a
  // temporary file of its own, so the file holds one writer's bytes whole.
  // A dead writer's temporary file is removed, a live one's is kept.
  std::string folder = testing::TempDir() + "/atomic-" + std::to_string(getpid());
  std::filesystem::create_directories(folder);
  std::string path = folder + "/state.safetensors";
  pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  std::string deadTemporary = path + ".tmp." + std::to_string(dead) + ".0";
  std::string liveTemporary = path + ".tmp." + std::to_string(getppid()) + ".7";
  for (const std::string &stale : {deadTemporary, liveTemporary})
    std::ofstream(stale) << "half a write";
  constexpr int kThreads = 4, kWrites = 50;
  std::vector<std::string> contents;
  for (int t = 0; t < kThreads; ++t)
    contents.push_back(std::string(64 * 1024 + t, static_cast<char>('a' + t)));
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int w = 0; w < kWrites; ++w) {
        std::string_view bytes = contents[t];
        // In two parts, so that a shared temporary would interleave.
        if (!writeFileAtomically(path, {bytes.substr(0, 1000), bytes.substr(1000)}, "test").ok())
          ++failures[t];
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures, std::vector<int>(kThreads, 0));
  StatusOr<std::string> read = readWholeFile(path, "test");
  ASSERT_TRUE(read.ok()) << read.status();
  bool whole = false;
  for (const std::string &written : contents)
    whole = whole || *read == written;
  EXPECT_TRUE(whole) << "the file holds " << read->size() << " bytes of no one writer";
  EXPECT_FALSE(std::filesystem::exists(deadTemporary));
  EXPECT_TRUE(std::filesystem::exists(liveTemporary));
  std::vector<std::string> left;
  for (const auto &entry : std::filesystem::directory_iterator(folder))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left,
            (std::vector<std::string>{"state.safetensors", "state.safetensors.tmp." +
                                                               std::to_string(getppid()) + ".7"}));
  std::filesystem::remove_all(folder);
}

} // namespace
} // namespace sinter::runtime
