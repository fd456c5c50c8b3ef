//===- TextTest.cpp - corpora, token files and tokenizers -----------------===//
#include "Helpers.h"

#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

/// GPT-2's 256 byte tokens (UTF-8) in the order of its first 256 ids: the
/// printable bytes as themselves, the others as U+0100 onwards.
std::vector<std::string> gpt2Alphabet() {
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
  std::vector<std::string> alphabet;
  for (int b = 0; b < 256; ++b)
    if (printable(b))
      alphabet.push_back(utf8(static_cast<uint32_t>(b)));
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b)
    if (!printable(b))
      alphabet.push_back(utf8(next++));
  return alphabet;
}

/// GPT-2's encoder.json for `tokens` (token -> its index).
std::string encoderJson(const std::vector<std::string> &tokens) {
  auto quoted = [](const std::string &token) {
    std::string out = "\"";
    for (char c : token) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    return out + "\"";
  };
  std::string encoder = "{";
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (id > 0)
      encoder += ',';
    encoder += quoted(tokens[id]);
    encoder += ':';
    encoder += std::to_string(id);
  }
  return encoder + "}";
}

// GPT-2's files as users bring them: its byte alphabet (ids 0..255 in its
// order, "Ġ" for the space) and merges applied by rank within words split
// by its pattern.
TEST(Text, ReadsGpt2FilesAndSplitsWordsAsGpt2) {
  std::string dir = scratch("gpt2");
  // The 256 byte tokens as GPT-2 orders them, then three merges.
  std::vector<std::string> tokens = gpt2Alphabet();
  tokens.push_back("\xc4\xa0t");   // "Ġt" (space + t): id 256
  tokens.push_back("he");          // 257
  tokens.push_back("\xc4\xa0the"); // 258 = "Ġt" + "he"
  write(dir + "-encoder.json", encoderJson(tokens));
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

// Non-ASCII text split by GPT-2's pattern (Note [GPT-2's pattern through
// PCRE2] in Text.cpp): letters, digits, white space and symbols of every
// script. The vocabulary is the 256 bytes and the merges below, learned by
// GPT-2's algorithm on a small mixed text, so that merges inside accented
// letters, Arabic-Indic digits, CJK and the quotes' bytes decide the ids.
// The ids came from GPT-2's own tokenizer (its pattern through Python's
// `regex`, its byte map and merge loop):
//   /usr/bin/python3 tests/golden/gpt2_pretokenize.py tests/unit/io/TextTest.cpp --print
// prints the cases with them; without --print it checks them (ctest -R
// golden.gpt2_pretokenize).
// BEGIN gpt2_pretokenize merges
const char *kNonAsciiMerges = R"merges(
h e
t he
Ã ©
â Ģ
Ġ the
Ġ âĢ
1 2
a f
af Ã©
c afÃ©
r Ã
£ Ù
£Ù ¤
£Ù¤ Ù
£Ù¤Ù ¥
± ä
±ä º
±äº ¬
Â «
Â »
Ù £Ù¤Ù¥
â Ĥ
âĤ ¬
æ Ŀ
)merges";
// END gpt2_pretokenize merges

data::BpeTokenizer nonAsciiTokenizer() {
  std::string dir = scratch("gpt2-non-ascii");
  std::vector<std::string> tokens = gpt2Alphabet();
  std::string bpe = "#version: 0.2\n";
  std::istringstream lines(kNonAsciiMerges);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) {
      tokens.push_back(line.substr(0, line.find(' ')) + line.substr(line.find(' ') + 1));
      bpe += line + "\n";
    }
  write(dir + "-encoder.json", encoderJson(tokens));
  write(dir + "-vocab.bpe", bpe);
  return data::BpeTokenizer::load(dir + "-encoder.json", dir + "-vocab.bpe");
}

TEST(Text, SplitsNonAsciiTextAsGpt2) {
  struct Case {
    std::string text;
    std::vector<int32_t> ids;
  };
  // BEGIN gpt2_pretokenize cases
  const std::vector<Case> cases = {
      {"café naïve crème brûlée", {265, 220, 77, 64,  127, 107, 85,  68, 220, 66, 266,
                                   101, 76,  68, 220, 65,  266, 119, 75, 258, 68}},
      {"Ünïcödé ÀÉÎÕÜ ßæøå",
       {127, 250, 77,  127, 107, 66,  127, 114, 67,  258, 220, 127, 222, 127, 231,
        127, 236, 127, 243, 127, 250, 220, 127, 253, 127, 99,  127, 116, 127, 98}},
      {"東京 東京タワー 한국어", {279, 273, 220, 279, 273, 159, 224, 123, 159, 225, 107, 159,
                                  225, 120, 220, 169, 243, 250, 166, 113, 255, 168, 244, 112}},
      {"٣٤٥ ١٢٣abc 12٣", {276, 220, 149, 94, 149, 95, 149, 96, 64, 65, 66, 220, 262, 149, 96}},
      {"a\u00a0b \u3000東京\u3000\u3000x",
       {64, 126, 254, 65, 220, 159, 222, 222, 279, 273, 159, 222, 222, 159, 222, 222, 87}},
      {"«oui» — «non»… ¿qué?", {274, 78,  84,  72, 275, 261, 242, 220, 274, 77,  78,
                                77,  275, 259, 99, 220, 126, 123, 80,  84,  258, 30}},
      {"emoji 🎉🎉 👍🏽 ok",
       {68,  76,  78,  73,  72,  220, 172, 253, 236, 231, 172, 253, 236,
        231, 220, 172, 253, 239, 235, 172, 253, 237, 121, 220, 78,  74}},
      {"café 12€ naïve", {265, 220, 262, 278, 220, 77, 64, 127, 107, 85, 68}},
      {"it's we're they'll I'd you've I'm don't",
       {72, 83,  6,  82, 220, 86, 68, 6,  81,  68, 260, 88, 6,   75, 75, 220, 40, 6,
        67, 220, 88, 78, 84,  6,  85, 68, 220, 40, 6,   76, 220, 67, 78, 77,  6,  83}},
      {"L'été c'est ’s ʼs",
       {43, 6, 258, 83, 258, 220, 66, 6, 68, 82, 83, 261, 247, 82, 220, 134, 120, 82}},
      {"x\u2003\u2003 y\u00a0\n\u2028z",
       {87, 259, 225, 259, 225, 220, 88, 126, 254, 198, 259, 101, 89}},
      {"½ ² Ⅻ ⑦ x²",
       {126, 121, 220, 126, 110, 220, 158, 227, 104, 220, 158, 239, 99, 220, 87, 126, 110}},
      {"Ελληνικά Русский עברית العربية",
       {138, 243, 138, 119, 138, 119, 138, 115, 138, 121, 138, 117, 138, 118, 138,
        105, 220, 140, 254, 141, 225, 141, 223, 141, 223, 140, 118, 140, 116, 140,
        117, 220, 147, 95,  147, 239, 147, 101, 147, 247, 147, 103, 220, 148, 100,
        149, 226, 148, 117, 148, 109, 148, 101, 149, 232, 148, 102}},
  };
  // END gpt2_pretokenize cases
  data::BpeTokenizer bpe = nonAsciiTokenizer();
  EXPECT_EQ(bpe.vocab_size(), 280);
  for (const Case &c : cases) {
    EXPECT_EQ(bpe.encode(c.text), c.ids) << c.text;
    EXPECT_EQ(bpe.decode(c.ids), c.text);
  }
}

// GPT-2 decodes its text first, so it never meets bytes that are not UTF-8;
// here each run of them is a word of its own: every byte still round-trips,
// and the valid text around it splits as it would alone.
TEST(Text, KeepsBytesThatAreNotUtf8AsWordsOfTheirOwn) {
  data::BpeTokenizer bpe = nonAsciiTokenizer();
  auto joined = [&](std::initializer_list<std::string> words) {
    std::vector<int32_t> ids;
    for (const std::string &word : words)
      for (int32_t id : bpe.encode(word))
        ids.push_back(id);
    return ids;
  };
  // A Latin-1 "é" (0xE9) inside a word, a lone continuation byte, a
  // sequence cut short (the first two bytes of "€"), and 0xFF, which UTF-8
  // never uses.
  std::string latin1 = "caf\xe9 ok",
              lone = "a\x80\x80"
                     "b",
              cut = "12\xe2\x82", ff = " \xff\xfe x";
  EXPECT_EQ(bpe.encode(latin1), joined({"caf", "\xe9", " ok"}));
  EXPECT_EQ(bpe.encode(lone), joined({"a", "\x80\x80", "b"}));
  EXPECT_EQ(bpe.encode(cut), joined({"12", "\xe2\x82"}));
  EXPECT_EQ(bpe.encode(ff), joined({" ", "\xff\xfe", " x"}));
  for (const std::string &text : {latin1, lone, cut, ff})
    EXPECT_EQ(bpe.decode(bpe.encode(text)), text);
  // Valid UTF-8 after the bad bytes still merges: "café" is one token.
  EXPECT_EQ(bpe.encode("\xff"
                       "caf\xc3\xa9"),
            joined({"\xff", "caf\xc3\xa9"}));
  EXPECT_EQ(bpe.encode("caf\xc3\xa9").size(), 1u);
}

} // namespace
} // namespace sinter
