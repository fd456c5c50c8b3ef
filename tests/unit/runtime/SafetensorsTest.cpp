//===- SafetensorsTest.cpp - the runtime's safetensors reader and writer --===//
//
// What the runtime alone (an artifact's session) reads and writes. Every
// malformed file's message is checked through the C++ API's
// io::load_safetensors (tests/unit/io/SafetensorsTest.cpp, train.bad_files).
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Files.h"
#include "sinter/runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

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

} // namespace
} // namespace sinter::runtime
