//===- TextTest.cpp - corpora, token files and tokenizers -----------------===//
#include "Helpers.h"

#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace sinter {
namespace {

using ::testing::ElementsAre;
using testing::errorOf;
using ::testing::HasSubstr;

std::string scratch(const std::string &name) { return testing::scratch("text_test", name); }

void write(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Text, ReadsAFileOrAFolderInNameOrder) {
  std::string dir = scratch("corpus");
  std::filesystem::create_directories(dir + "/sub");
  write(dir + "/b.txt", "second");
  write(dir + "/a.txt", "first");
  write(dir + "/sub/c.txt", "third");
  EXPECT_EQ(data::read_text(dir + "/a.txt"), "first");
  EXPECT_EQ(data::read_text(dir), "first\nsecond\nthird\n");
  EXPECT_THAT(errorOf([&] { data::read_text(dir + "/none"); }),
              HasSubstr("read_text: no such file or folder"));
}

TEST(Text, ReadsRawAndLlmCTokenFiles) {
  std::vector<uint16_t> tokens = {0, 1, 50256, 65535};
  std::string raw(reinterpret_cast<const char *>(tokens.data()), 8);
  write(scratch("raw.bin"), raw);
  EXPECT_THAT(data::read_token_file(scratch("raw.bin")), ElementsAre(0, 1, 50256, 65535));
  std::vector<int32_t> header(256, 0);
  header[0] = 20240520;
  header[1] = 1;
  header[2] = 4;
  std::string llmc(reinterpret_cast<const char *>(header.data()), 1024);
  write(scratch("llmc.bin"), llmc + raw);
  EXPECT_THAT(data::read_token_file(scratch("llmc.bin")), ElementsAre(0, 1, 50256, 65535));
  write(scratch("short.bin"), llmc + raw.substr(0, 6));
  EXPECT_THAT(errorOf([&] { data::read_token_file(scratch("short.bin")); }),
              HasSubstr("has llm.c's header (version 1, 4 tokens) but 1030 bytes"));
  write(scratch("odd.bin"), "abc");
  EXPECT_THAT(errorOf([&] { data::read_token_file(scratch("odd.bin")); }),
              HasSubstr("holds 3 bytes, not a whole number of uint16 tokens"));
}

TEST(Text, ByteTokenizerRoundTripsAnyBytes) {
  auto tokenizer = data::byte_tokenizer();
  std::string text("caf\xc3\xa9 \x00\xff!", 9);
  std::vector<int32_t> ids = tokenizer->encode(text);
  EXPECT_EQ(ids.size(), 9u);
  EXPECT_EQ(ids[3], 0xc3);
  EXPECT_EQ(tokenizer->decode(ids), text);
  EXPECT_EQ(tokenizer->vocab_size(), 256);
  EXPECT_THROW(tokenizer->decode({256}), Error);
}

const char *kCorpus =
    "The GNU General Public License is a free, copyleft license for software and other kinds "
    "of works. The licenses for most software and other practical works are designed to take "
    "away your freedom to share and change the works. By contrast, the GNU General Public "
    "License is intended to guarantee your freedom to share and change all versions of a "
    "program--to make sure it remains free software for all its users. We, the Free Software "
    "Foundation, use the GNU General Public License for most of our software; it applies also "
    "to any other work released this way by its authors. You can apply it to your programs, "
    "too. It's 2007, isn't it?\n\n  Version 3, 29 June 2007\n";

TEST(Text, TrainedBpeCompressesAndRoundTrips) {
  data::BpeTokenizer bpe = data::BpeTokenizer::train(kCorpus, 300);
  EXPECT_EQ(bpe.vocab_size(), 300);
  std::vector<int32_t> ids = bpe.encode(kCorpus);
  EXPECT_EQ(bpe.decode(ids), kCorpus);
  EXPECT_LT(ids.size(), std::string(kCorpus).size() * 2 / 3); // merges shorten the text
  // Text it was not trained on, with bytes it never saw, still round-trips.
  std::string unseen("Z\xe2\x82\xac 42 \x01\t\r\nqqq", 15);
  EXPECT_EQ(bpe.decode(bpe.encode(unseen)), unseen);
  // Saved in GPT-2's format and read back: the same ids.
  std::string dir = scratch("bpe");
  bpe.save(dir);
  data::BpeTokenizer loaded = data::BpeTokenizer::load(dir + "/encoder.json", dir + "/vocab.bpe");
  EXPECT_EQ(loaded.vocab_size(), 300);
  EXPECT_EQ(loaded.encode(kCorpus), ids);
  std::ifstream merges(dir + "/vocab.bpe");
  std::string first;
  std::getline(merges, first);
  EXPECT_EQ(first, "#version: 0.2");
  // Training is deterministic.
  EXPECT_EQ(data::BpeTokenizer::train(kCorpus, 300).encode(kCorpus), ids);
  EXPECT_THAT(errorOf([&] { data::BpeTokenizer::train(kCorpus, 100); }),
              HasSubstr("vocab_size must be at least 256"));
}

// GPT-2's files as users bring them: its byte alphabet (ids 0..255 in its
// order, "Ġ" for the space) and merges applied by rank within words split
// by its pattern.
TEST(Text, ReadsGpt2FilesAndSplitsWordsAsGpt2) {
  std::string dir = scratch("gpt2");
  // The 256 byte tokens as GPT-2 orders them, then three merges.
  std::string encoder = "{";
  std::vector<std::string> alphabet;
  auto utf8 = [](uint32_t c) {
    std::string s;
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else {
      s += static_cast<char>(0xC0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3F));
    }
    return s;
  };
  auto printable = [](int b) {
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  };
  for (int b = 0; b < 256; ++b)
    if (printable(b))
      alphabet.push_back(utf8(static_cast<uint32_t>(b)));
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b)
    if (!printable(b))
      alphabet.push_back(utf8(next++));
  auto quoted = [](const std::string &token) {
    std::string out = "\"";
    for (char c : token) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    return out + "\"";
  };
  std::vector<std::string> tokens = alphabet;
  tokens.push_back("\xc4\xa0t");   // "Ġt" (space + t): id 256
  tokens.push_back("he");          // 257
  tokens.push_back("\xc4\xa0the"); // 258 = "Ġt" + "he"
  for (size_t id = 0; id < tokens.size(); ++id)
    encoder += (id ? "," : "") + quoted(tokens[id]) + ":" + std::to_string(id);
  encoder += "}";
  write(dir + "-encoder.json", encoder);
  write(dir + "-vocab.bpe", "#version: 0.2\n\xc4\xa0 t\nh e\n\xc4\xa0t he\n");
  data::BpeTokenizer bpe = data::BpeTokenizer::load(dir + "-encoder.json", dir + "-vocab.bpe");
  EXPECT_EQ(bpe.vocab_size(), 259);
  // "!" is id 0, "A" 32 and the space ("Ġ") 220 in GPT-2's vocabulary;
  // " the" is one token; " hehe" is the space and "he" twice.
  EXPECT_THAT(bpe.encode("! the hehe"), ElementsAre(0, 258, 220, 257, 257));
  EXPECT_EQ(bpe.encode("A")[0], 32);
  EXPECT_EQ(bpe.decode(bpe.encode("it's 12 the\n\n  x")), "it's 12 the\n\n  x");

  write(dir + "-bad.bpe", "#version: 0.2\nq z\n");
  EXPECT_THAT(errorOf([&] { data::BpeTokenizer::load(dir + "-encoder.json", dir + "-bad.bpe"); }),
              HasSubstr("-bad.bpe:2: \"q z\" is not a merge \"A B\" of two tokens whose join is"));
  write(dir + "-empty.bpe", "");
  EXPECT_THAT(errorOf([&] { data::BpeTokenizer::load(dir + "-encoder.json", dir + "-empty.bpe"); }),
              HasSubstr("-empty.bpe is empty (GPT-2's vocab.bpe holds a \"#version\" line"));
  write(dir + "-bytes.bpe", "#version: 0.2\n"); // a vocabulary of the bytes alone
  EXPECT_THAT(data::BpeTokenizer::load(dir + "-encoder.json", dir + "-bytes.bpe").encode(" the"),
              ElementsAre(220, 83, 71, 68));
  write(dir + "-small.json", R"({"a": 0})");
  EXPECT_THAT(errorOf([&] { data::BpeTokenizer::load(dir + "-small.json", dir + "-vocab.bpe"); }),
              HasSubstr("has no token for byte"));
  write(dir + "-dup.json", R"({"a": 0, "b": 0})");
  EXPECT_THAT(errorOf([&] { data::BpeTokenizer::load(dir + "-dup.json", dir + "-vocab.bpe"); }),
              HasSubstr("ids must be 0..1, each once"));
  write(dir + "-notjson.json", "[1, 2");
  EXPECT_THAT(errorOf([&] { data::BpeTokenizer::load(dir + "-notjson.json", dir + "-vocab.bpe"); }),
              HasSubstr("is not a JSON object of tokens to ids"));
}

} // namespace
} // namespace sinter
