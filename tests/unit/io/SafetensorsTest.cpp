//===- SafetensorsTest.cpp - checkpoint files -----------------------------===//
#include "Helpers.h"

#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace sinter {
namespace {

using ::testing::ElementsAre;
using testing::errorOf;
using ::testing::HasSubstr;

std::string scratch(const std::string &name) { return testing::scratch("safetensors_test", name); }

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A file with the given header JSON and data bytes.
std::string fileWith(const std::string &header, const std::string &data) {
  uint64_t length = header.size();
  return std::string(reinterpret_cast<const char *>(&length), 8) + header + data;
}

TEST(Safetensors, RoundTripsEveryDTypeAndTheMetadata) {
  std::string path = scratch("round_trip.safetensors");
  Tensor f = from_vector<float>({1.5f, -0.0f, 3.25e-8f, 1e30f, -7, 0.1f}, {2, 3});
  Tensor i = from_vector<int32_t>({-5, 2147483647}, {2});
  Tensor l = from_vector<int64_t>({int64_t(1) << 53, -1, 0}, {3, 1});
  Tensor b = from_vector<int32_t>({1, 0, 1}, {3}, DType::boolean);
  Tensor s = full({}, 2.0);
  io::save_safetensors(path, {{"f", f}, {"i", i}, {"l", l}, {"b", b}, {"scalar", s}},
                       {{"step", "12"}, {"note", "a \"quoted\" value"}});
  io::SafetensorsFile file = io::load_safetensors(path);
  ASSERT_EQ(file.tensors.size(), 5u);
  EXPECT_EQ(file.tensors[0].first, "f"); // in the order of their bytes
  EXPECT_EQ(file.at("f").shape(), (Shape{2, 3}));
  std::vector<float> values = file.at("f").to_vector<float>();
  std::vector<float> expected = f.to_vector<float>();
  EXPECT_EQ(std::memcmp(values.data(), expected.data(), values.size() * 4), 0); // to the bit
  EXPECT_EQ(file.at("i").dtype(), DType::i32);
  EXPECT_THAT(file.at("i").to_vector<int64_t>(), ElementsAre(-5, 2147483647));
  EXPECT_EQ(file.at("l").shape(), (Shape{3, 1}));
  EXPECT_THAT(file.at("l").to_vector<int64_t>(), ElementsAre(int64_t(1) << 53, -1, 0));
  EXPECT_EQ(file.at("b").dtype(), DType::boolean);
  EXPECT_THAT(file.at("b").to_vector<int64_t>(), ElementsAre(1, 0, 1));
  EXPECT_EQ(file.at("scalar").shape(), Shape{});
  EXPECT_EQ(file.at("scalar").item<double>(), 2.0);
  EXPECT_EQ(file.metadata.at("step"), "12");
  EXPECT_EQ(file.metadata.at("note"), "a \"quoted\" value");
  EXPECT_THAT(errorOf([&] { file.at("missing"); }),
              HasSubstr("no tensor named 'missing' (the file holds: f, i, l, b, scalar)"));

  // The layout is the format's: 8-byte length, JSON, data aligned to 8.
  std::ifstream in(path, std::ios::binary);
  uint64_t length = 0;
  in.read(reinterpret_cast<char *>(&length), 8);
  EXPECT_EQ(length % 8, 0u);
  std::string header(length, '\0');
  in.read(header.data(), static_cast<std::streamsize>(length));
  EXPECT_THAT(header,
              HasSubstr("\"f\":{\"data_offsets\":[0,24],\"dtype\":\"F32\",\"shape\":[2,3]}"));
}

TEST(Safetensors, ReadsTheDTypesOtherToolsWrite) {
  std::string path = scratch("other.safetensors");
  double d[2] = {0.5, -2};
  uint16_t u[3] = {0, 65535, 7};
  std::string data(reinterpret_cast<const char *>(d), 16);
  data += std::string(reinterpret_cast<const char *>(u), 6);
  data += std::string("\x03\xff", 2);
  writeBytes(path, fileWith(R"({"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                            R"("u":{"dtype":"U16","shape":[3],"data_offsets":[16,22]},)"
                            R"("b":{"dtype":"U8","shape":[2],"data_offsets":[22,24]}})",
                            data));
  io::SafetensorsFile file = io::load_safetensors(path);
  EXPECT_EQ(file.at("d").dtype(), DType::f32);
  EXPECT_THAT(file.at("d").to_vector<double>(), ElementsAre(0.5, -2));
  EXPECT_THAT(file.at("u").to_vector<int64_t>(), ElementsAre(0, 65535, 7));
  EXPECT_THAT(file.at("b").to_vector<int64_t>(), ElementsAre(3, 255));
}

TEST(Safetensors, MalformedFilesAreNamedErrors) {
  std::string path = scratch("bad.safetensors");
  auto loadError = [&](const std::string &bytes) {
    writeBytes(path, bytes);
    return errorOf([&] { io::load_safetensors(path); });
  };
  EXPECT_THAT(loadError("abc"), HasSubstr("truncated (3 bytes"));
  EXPECT_THAT(loadError(fileWith("{}", "").substr(0, 8) + "{"),
              HasSubstr("the header length 2 runs past the end of the file"));
  EXPECT_THAT(loadError(fileWith("[1,2]", "")), HasSubstr("the header is not a JSON object"));
  EXPECT_THAT(loadError(fileWith("{not json", "")), HasSubstr("the header is not a JSON object"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[2]}})", "")),
              HasSubstr("tensor 'x' needs \"dtype\", \"shape\" and two \"data_offsets\""));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                 std::string(4, '\0'))),
              HasSubstr("tensor 'x' has bytes [0, 8) outside the 4 bytes of data"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                                 std::string(8, '\0'))),
              HasSubstr("tensor 'x' of shape [3] and dtype F32 needs 3 elements of 4 bytes, its "
                        "range holds 8 bytes"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})",
                                 std::string(8, '\0'))),
              HasSubstr("tensor 'x' has dtype C64, which Sinter does not read"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                                 std::string(4, '\0'))),
              HasSubstr("tensor 'x' has a shape entry that is not a size: -1"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                 std::string(8, '\0'))),
              HasSubstr("starts at byte 4, expected 8 (overlapping or missing data)"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                 std::string(8, '\0'))),
              HasSubstr("the tensors cover 4 of the 8 bytes of data"));
  EXPECT_THAT(loadError(fileWith(R"({"__metadata__":{"step":3}})", "")),
              HasSubstr("metadata \"step\" is not a string"));
  // Sizes that overflow: the byte count of 2^62 + 1 floats wraps to 4; two
  // dims of 2^32 wrap the element count to 0. Neither allocates.
  EXPECT_THAT(loadError(fileWith(
                  R"({"x":{"dtype":"F32","shape":[4611686018427387905],"data_offsets":[0,4]}})",
                  std::string(4, '\0'))),
              HasSubstr("tensor 'x' has a shape entry that is not a size: 4611686018427387905"));
  EXPECT_THAT(
      loadError(fileWith(
          R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", "")),
      HasSubstr("tensor 'x' has a shape [4294967296,4294967296] whose element count overflows"));
  EXPECT_THAT(loadError(fileWith(
                  R"({"x":{"dtype":"F64","shape":[2305843009213693953],"data_offsets":[0,8]}})",
                  std::string(8, '\0'))),
              HasSubstr("needs 2305843009213693953 elements of 8 bytes, its range holds 8 bytes"));
  EXPECT_THAT(loadError(fileWith(R"({"__metadata__":[1]})", "")),
              HasSubstr("\"__metadata__\" is not an object"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})",
                                 std::string(4, '\0'))),
              HasSubstr("tensor 'x' has bytes [4, 0) outside the 4 bytes of data"));
  EXPECT_THAT(loadError(fileWith(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,"4"]}})",
                                 std::string(4, '\0'))),
              HasSubstr("tensor 'x' has data_offsets that are not byte positions"));
  EXPECT_THAT(errorOf([&] { io::load_safetensors(scratch("does-not-exist")); }),
              HasSubstr("load_safetensors: cannot open"));
}

TEST(Safetensors, RefusesWhatItCannotWrite) {
  std::string path = scratch("refused.safetensors");
  EXPECT_THAT(errorOf([&] {
                io::save_safetensors(path, {{"a", ones({2})}, {"a", ones({1})}});
              }),
              HasSubstr("two tensors are named 'a'"));
  EXPECT_THAT(errorOf([&] {
                io::save_safetensors(path, {{"", ones({2})}});
              }),
              HasSubstr("invalid tensor name ''"));
  EXPECT_THAT(errorOf([&] {
                io::save_safetensors(path, {{"h", ones({2}, DType::f16)}});
              }),
              HasSubstr("tensor 'h' is f16; f32, i32, i64 and bool can be saved"));
  EXPECT_THAT(errorOf([&] { io::save_safetensors("/nonexistent-dir/x.safetensors", {}); }),
              HasSubstr("cannot create /nonexistent-dir/x.safetensors.tmp."));
  EXPECT_FALSE(std::filesystem::exists(path));
}

// A process that dies while writing a checkpoint (here: killed by SIGXFSZ
// when the file passes its size limit) leaves the previous one whole.
TEST(Safetensors, ACrashMidWriteLeavesThePreviousFileIntact) {
  std::string path = scratch("atomic.safetensors");
  io::save_safetensors(path, {{"w", full({4}, 1.0)}}, {{"step", "1"}});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit limit{64 * 1024, 64 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
    io::save_safetensors(path, {{"w", full({1 << 20}, 2.0)}}, {{"step", "2"}}); // 4 MiB
    _exit(0); // not reached: the write past 64 KiB kills the process
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child finished writing: the test did not crash it";
  EXPECT_EQ(WTERMSIG(status), SIGXFSZ);
  io::SafetensorsFile file = io::load_safetensors(path);
  EXPECT_EQ(file.metadata.at("step"), "1");
  EXPECT_THAT(file.at("w").to_vector<double>(), ElementsAre(1, 1, 1, 1));
  // The dead writer's partial file is beside it, and the next save replaces
  // the checkpoint and removes that file.
  // (`<path>.tmp.<pid>.<n>`: one name per write.)
  auto partials = [&] {
    std::string prefix =
        std::filesystem::path(path).filename().string() + ".tmp." + std::to_string(child) + ".";
    std::vector<std::string> found;
    for (const auto &entry :
         std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
      if (entry.path().filename().string().rfind(prefix, 0) == 0)
        found.push_back(entry.path().string());
    return found;
  };
  EXPECT_EQ(partials().size(), 1u);
  io::save_safetensors(path, {{"w", full({2}, 3.0)}}, {{"step", "3"}});
  EXPECT_EQ(io::load_safetensors(path).metadata.at("step"), "3");
  EXPECT_TRUE(partials().empty());
}

} // namespace
} // namespace sinter
