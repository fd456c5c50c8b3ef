//===- Text.cpp - text corpora and tokenizers -----------------------------===//
#include "sinter/data/Text.h"

#include "../Format.h"
#include "../io/ReadFile.h"
#include "sinter/Error.h"
#include "sinter/io/AtomicFile.h"

#include <nlohmann/json.hpp>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unordered_map>

namespace sinter::data {
namespace {

using io::readFile;

std::string utf8(uint32_t codepoint) {
  std::string out;
  if (codepoint < 0x80) {
    out += static_cast<char>(codepoint);
  } else if (codepoint < 0x800) {
    out += static_cast<char>(0xC0 | (codepoint >> 6));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (codepoint >> 12));
    out += static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  }
  return out;
}

/// GPT-2's map of the 256 bytes to printable characters (as UTF-8), in the
/// order of the first 256 ids of its vocabulary: the printable bytes map to
/// themselves, the others to U+0100 onwards.
struct ByteAlphabet {
  std::vector<uint8_t> order;                    // the bytes, in id order
  std::string of[256];                           // byte -> character
  std::unordered_map<std::string, uint8_t> byte; // character -> byte
  ByteAlphabet() {
    auto printable = [](int b) {
      return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    };
    for (int b = 0; b < 256; ++b)
      if (printable(b))
        order.push_back(static_cast<uint8_t>(b));
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b)
      if (!printable(b))
        order.push_back(static_cast<uint8_t>(b));
    for (uint8_t b : order) {
      of[b] = printable(b) ? utf8(b) : utf8(next++);
      byte[of[b]] = b;
    }
  }
};

const ByteAlphabet &alphabet() {
  static const ByteAlphabet instance;
  return instance;
}

// Note [GPT-2's pattern through PCRE2]
// GPT-2 splits text into words with one regular expression, run by Python's
// `regex` module over decoded text:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// PCRE2 runs it here over the UTF-8 bytes (PCRE2_UTF | PCRE2_UCP), with one
// change: `\s` is spelled out as Unicode's White_Space property, which is
// what `regex` means by it; PCRE2's `\s` also takes U+180E (Mongolian vowel
// separator), so "x\u180e\u180ey" would split differently. Compared once
// over every code point (each in letter, digit, space and contraction
// contexts), the two then agree on every character assigned in Unicode 14,
// the version of Debian 12's PCRE2 tables; characters assigned later are
// "other" symbols here. tests/golden/gpt2_pretokenize.py keeps the test's
// non-ASCII cases tied to GPT-2's own code.
//
// GPT-2 never sees invalid UTF-8 (Python decodes the text first), so there is
// no behaviour to copy. Here each run of bytes that is not UTF-8 becomes a
// word of its own (PCRE2_MATCH_INVALID_UTF: no part of the pattern matches
// such bytes, so they lie between matches): a byte-level vocabulary still
// encodes and decodes every byte, a stray Latin-1 byte in a corpus costs its
// own tokens, and the valid text around it splits as GPT-2 would split it.
//
// The compiled pattern is shared; each call gets its own match data, so
// encode() can run on several threads.

/// Unicode's White_Space property: what Python's `regex` means by `\s`.
#define SINTER_WHITE_SPACE                                                                         \
  R"(\t-\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})"

constexpr const char *kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^)" SINTER_WHITE_SPACE R"(\p{L}\p{N}]+)"
    R"(|[)" SINTER_WHITE_SPACE R"(]+(?![^)" SINTER_WHITE_SPACE R"(])|[)" SINTER_WHITE_SPACE R"(]+)";
#undef SINTER_WHITE_SPACE

std::string pcre2Message(int code) {
  PCRE2_UCHAR buffer[256];
  int length = pcre2_get_error_message(code, buffer, sizeof buffer);
  return length < 0 ? cat("PCRE2 error ", code)
                    : std::string(reinterpret_cast<const char *>(buffer), length);
}

/// GPT-2's pattern, compiled once (JIT-compiled too where PCRE2 has a JIT).
const pcre2_code &gpt2Pattern() {
  static const std::unique_ptr<pcre2_code, decltype(&pcre2_code_free)> pattern = [] {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code *code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kGpt2Pattern), PCRE2_ZERO_TERMINATED,
                      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
    SINTER_CHECK(code != nullptr, Loc::current(),
                 cat("BpeTokenizer: GPT-2's pattern does not compile at offset ", offset, ": ",
                     pcre2Message(error)));
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); // without a JIT, pcre2_match interprets
    return std::unique_ptr<pcre2_code, decltype(&pcre2_code_free)>(code, &pcre2_code_free);
  }();
  return *pattern;
}

/// Splits text into GPT-2's pre-tokenization words (Note [GPT-2's pattern
/// through PCRE2]). The words cover the text, in order.
std::vector<std::string_view> words(std::string_view text) {
  const pcre2_code &pattern = gpt2Pattern();
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(&pattern, nullptr), &pcre2_match_data_free);
  SINTER_CHECK(match != nullptr, Loc::current(), "BpeTokenizer: out of memory for a match");
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    int found = pcre2_match(&pattern, subject, text.size(), at, 0, match.get(), nullptr);
    size_t begin = text.size(), end = text.size();
    if (found >= 0) {
      const PCRE2_SIZE *span = pcre2_get_ovector_pointer(match.get());
      begin = span[0];
      end = span[1];
    } else {
      SINTER_CHECK(
          found == PCRE2_ERROR_NOMATCH, Loc::current(),
          cat("BpeTokenizer: splitting the text at byte ", at, " failed: ", pcre2Message(found)));
    }
    if (begin > at) // bytes that are not UTF-8
      out.push_back(text.substr(at, begin - at));
    if (end > begin)
      out.push_back(text.substr(begin, end - begin));
    at = end;
  }
  return out;
}

} // namespace

std::string read_text(const std::string &path, Loc loc) {
  namespace fs = std::filesystem;
  SINTER_CHECK(fs::exists(path), loc, cat("read_text: no such file or folder: ", path));
  if (!fs::is_directory(path)) {
    std::string text = readFile(path, "read_text", loc);
    SINTER_CHECK(!text.empty(), loc, cat("read_text: the file ", path, " is empty"));
    return text;
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry &entry : fs::recursive_directory_iterator(path))
    if (entry.is_regular_file())
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::string text;
  for (const fs::path &file : files)
    text += readFile(file.string(), "read_text", loc) + "\n";
  SINTER_CHECK(!text.empty(), loc, cat("read_text: the folder ", path, " holds no text"));
  return text;
}

std::vector<int32_t> read_token_file(const std::string &path, Loc loc) {
  std::string bytes = readFile(path, "read_token_file", loc);
  size_t begin = 0, count = bytes.size() / 2;
  int32_t header[3] = {0, 0, 0};
  if (bytes.size() >= 1024)
    std::memcpy(header, bytes.data(), sizeof header);
  int32_t magic = 0;
  if (bytes.size() >= 4)
    std::memcpy(&magic, bytes.data(), 4);
  SINTER_CHECK(magic != 20240520 || bytes.size() >= 1024, loc,
               cat("read_token_file: ", path, " starts with llm.c's magic number but holds ",
                   bytes.size(), " bytes; llm.c's header alone takes 1024 (a cut file?)"));
  if (header[0] == 20240520) { // llm.c
    SINTER_CHECK(header[1] == 1 && header[2] >= 0 &&
                     bytes.size() == 1024 + 2 * static_cast<size_t>(header[2]),
                 loc,
                 cat("read_token_file: ", path, " has llm.c's header (version ", header[1], ", ",
                     header[2], " tokens) but ", bytes.size(), " bytes; expected version 1 and ",
                     1024 + 2 * static_cast<int64_t>(header[2]), " bytes"));
    begin = 1024;
    count = static_cast<size_t>(header[2]);
  } else {
    SINTER_CHECK(bytes.size() % 2 == 0 && !bytes.empty(), loc,
                 cat("read_token_file: ", path, " holds ", bytes.size(),
                     " bytes, not a whole number of uint16 tokens"));
  }
  std::vector<uint16_t> raw(count);
  if (count > 0)
    std::memcpy(raw.data(), bytes.data() + begin, count * 2);
  return std::vector<int32_t>(raw.begin(), raw.end());
}

namespace {

class ByteTokenizer final : public Tokenizer {
public:
  int64_t vocab_size() const override { return 256; }
  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    ids.reserve(text.size());
    for (char c : text)
      ids.push_back(static_cast<unsigned char>(c));
    return ids;
  }
  std::string decode(const std::vector<int32_t> &ids) const override {
    std::string text;
    for (int32_t id : ids) {
      SINTER_CHECK(id >= 0 && id < 256, Loc::current(),
                   cat("decode: id ", id, " is not a byte (0..255)"));
      text += static_cast<char>(id);
    }
    return text;
  }
};

} // namespace

std::unique_ptr<Tokenizer> byte_tokenizer() { return std::make_unique<ByteTokenizer>(); }

void BpeTokenizer::index() {
  ids_.clear();
  for (size_t id = 0; id < tokens_.size(); ++id)
    ids_[tokens_[id]] = static_cast<int32_t>(id);
  ranks_.clear();
  for (size_t rank = 0; rank < merges_.size(); ++rank)
    ranks_.emplace(merges_[rank], static_cast<int32_t>(rank));
}

BpeTokenizer BpeTokenizer::load(const std::string &encoder_json, const std::string &vocab_bpe,
                                Loc loc) {
  nlohmann::json encoder = nlohmann::json::parse(readFile(encoder_json, "BpeTokenizer", loc),
                                                 nullptr, /*allow_exceptions=*/false);
  SINTER_CHECK(encoder.is_object() && !encoder.empty(), loc,
               cat("BpeTokenizer: ", encoder_json,
                   " is not a JSON object of tokens to ids (GPT-2's encoder.json)"));
  BpeTokenizer tokenizer;
  tokenizer.tokens_.resize(encoder.size());
  for (const auto &[token, id] : encoder.items()) {
    SINTER_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0 &&
                     id.get<int64_t>() < static_cast<int64_t>(encoder.size()) &&
                     tokenizer.tokens_[id.get<size_t>()].empty(),
                 loc,
                 cat("BpeTokenizer: ", encoder_json, ": token \"", token, "\" has id ", id.dump(),
                     "; ids must be 0..", encoder.size() - 1, ", each once"));
    tokenizer.tokens_[id.get<size_t>()] = token;
  }
  tokenizer.index();
  for (uint8_t b : alphabet().order)
    SINTER_CHECK(tokenizer.ids_.count(alphabet().of[b]), loc,
                 cat("BpeTokenizer: ", encoder_json, " has no token for byte ", int(b),
                     " (a byte-level BPE vocabulary holds all 256)"));
  std::ifstream in(vocab_bpe);
  SINTER_CHECK(in.good(), loc, cat("BpeTokenizer: cannot open ", vocab_bpe));
  std::string line;
  int64_t number = 1;
  for (; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t space = line.find(' ');
    std::string left = line.substr(0, space),
                right = space == std::string::npos ? "" : line.substr(space + 1);
    SINTER_CHECK(space != std::string::npos && !left.empty() && !right.empty() &&
                     right.find(' ') == std::string::npos && tokenizer.ids_.count(left + right),
                 loc,
                 cat("BpeTokenizer: ", vocab_bpe, ":", number, ": \"", line,
                     "\" is not a merge \"A B\" of two tokens whose join is in ", encoder_json));
    tokenizer.merges_.emplace_back(left, right);
  }
  // An empty file is a cut copy, not a vocabulary of bytes alone (that one
  // still has its "#version" line).
  SINTER_CHECK(number > 1, loc,
               cat("BpeTokenizer: ", vocab_bpe,
                   " is empty (GPT-2's vocab.bpe holds a \"#version\" line and the merges)"));
  tokenizer.index();
  return tokenizer;
}

BpeTokenizer BpeTokenizer::train(std::string_view text, int64_t vocab_size, Loc loc) {
  SINTER_CHECK(
      vocab_size >= 256, loc,
      cat("BpeTokenizer::train: vocab_size must be at least 256 (the bytes), got ", vocab_size));
  BpeTokenizer tokenizer;
  for (uint8_t b : alphabet().order)
    tokenizer.tokens_.push_back(alphabet().of[b]);
  tokenizer.index();
  // Each distinct word once, as ids, with how often it occurs.
  std::unordered_map<std::string_view, int64_t> counts;
  for (std::string_view word : words(text))
    ++counts[word];
  std::vector<std::vector<int32_t>> pieces;
  std::vector<int64_t> frequency;
  for (const auto &[word, count] : counts) {
    std::vector<int32_t> ids;
    for (char c : word)
      ids.push_back(tokenizer.ids_.at(alphabet().of[static_cast<unsigned char>(c)]));
    pieces.push_back(std::move(ids));
    frequency.push_back(count);
  }
  while (tokenizer.vocab_size() < vocab_size) {
    std::map<std::pair<int32_t, int32_t>, int64_t> pairs;
    for (size_t w = 0; w < pieces.size(); ++w)
      for (size_t k = 0; k + 1 < pieces[w].size(); ++k)
        pairs[{pieces[w][k], pieces[w][k + 1]}] += frequency[w];
    std::pair<int32_t, int32_t> best{-1, -1};
    int64_t bestCount = 1; // a pair seen once is not worth a token
    std::string bestToken;
    for (const auto &[pair, count] : pairs) {
      std::string token = tokenizer.tokens_[pair.first] + tokenizer.tokens_[pair.second];
      if (count > bestCount || (count == bestCount && best.first >= 0 && token < bestToken)) {
        best = pair;
        bestCount = count;
        bestToken = token;
      }
    }
    if (best.first < 0)
      break;
    auto id = static_cast<int32_t>(tokenizer.tokens_.size());
    tokenizer.tokens_.push_back(bestToken);
    tokenizer.merges_.emplace_back(tokenizer.tokens_[best.first], tokenizer.tokens_[best.second]);
    for (std::vector<int32_t> &ids : pieces) {
      std::vector<int32_t> merged;
      for (size_t k = 0; k < ids.size(); ++k) {
        if (k + 1 < ids.size() && ids[k] == best.first && ids[k + 1] == best.second) {
          merged.push_back(id);
          ++k;
        } else {
          merged.push_back(ids[k]);
        }
      }
      ids = std::move(merged);
    }
  }
  tokenizer.index();
  return tokenizer;
}

void BpeTokenizer::save(const std::string &dir, Loc loc) const {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  SINTER_CHECK(!error, loc, cat("BpeTokenizer::save: cannot create ", dir, ": ", error.message()));
  nlohmann::json encoder = nlohmann::json::object();
  for (size_t id = 0; id < tokens_.size(); ++id)
    encoder[tokens_[id]] = id;
  io::write_file_atomically(dir + "/encoder.json", {encoder.dump()}, "BpeTokenizer::save", loc);
  std::string merges = "#version: 0.2\n";
  for (const auto &[left, right] : merges_)
    merges += left + " " + right + "\n";
  io::write_file_atomically(dir + "/vocab.bpe", {merges}, "BpeTokenizer::save", loc);
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::unordered_map<std::string_view, std::vector<int32_t>> cache;
  std::vector<int32_t> out;
  for (std::string_view word : words(text)) {
    auto cached = cache.find(word);
    if (cached == cache.end()) {
      std::vector<std::string> symbols;
      for (char c : word)
        symbols.push_back(alphabet().of[static_cast<unsigned char>(c)]);
      while (symbols.size() > 1) {
        int32_t bestRank = -1;
        size_t at = 0;
        for (size_t k = 0; k + 1 < symbols.size(); ++k) {
          auto rank = ranks_.find({symbols[k], symbols[k + 1]});
          if (rank != ranks_.end() && (bestRank < 0 || rank->second < bestRank)) {
            bestRank = rank->second;
            at = k;
          }
        }
        if (bestRank < 0)
          break;
        const auto &[left, right] = merges_[static_cast<size_t>(bestRank)];
        std::vector<std::string> merged;
        for (size_t k = 0; k < symbols.size(); ++k) {
          if (k >= at && k + 1 < symbols.size() && symbols[k] == left && symbols[k + 1] == right) {
            merged.push_back(left + right);
            ++k;
          } else {
            merged.push_back(symbols[k]);
          }
        }
        symbols = std::move(merged);
      }
      std::vector<int32_t> ids;
      for (const std::string &symbol : symbols)
        ids.push_back(ids_.at(symbol));
      cached = cache.emplace(word, std::move(ids)).first;
    }
    out.insert(out.end(), cached->second.begin(), cached->second.end());
  }
  return out;
}

std::string BpeTokenizer::decode(const std::vector<int32_t> &ids) const {
  std::string text;
  for (int32_t id : ids) {
    SINTER_CHECK(id >= 0 && id < vocab_size(), Loc::current(),
                 cat("decode: id ", id, " is outside the vocabulary (", vocab_size(), " ids)"));
    const std::string &token = tokens_[static_cast<size_t>(id)];
    for (size_t k = 0; k < token.size();) {
      size_t length = (token[k] & 0x80) == 0 ? 1 : (token[k] & 0xE0) == 0xC0 ? 2 : 3;
      auto byte = alphabet().byte.find(token.substr(k, length));
      SINTER_CHECK(byte != alphabet().byte.end(), Loc::current(),
                   cat("decode: token ", id, " holds a character outside GPT-2's byte alphabet"));
      text += static_cast<char>(byte->second);
      k += length;
    }
  }
  return text;
}

} // namespace sinter::data
