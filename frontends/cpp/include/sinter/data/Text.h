//===- Text.h - text corpora and tokenizers --------------------*- C++ -*-===//
//
// What a language-model job reads: text (a file, or every file of a folder),
// turned into token ids by a byte-level tokenizer (one id per byte) or a
// byte-level BPE tokenizer in GPT-2's format (`encoder.json` + `vocab.bpe`,
// read as they are or trained on a corpus), or token ids already written as
// little-endian uint16 files (as nanoGPT's `prepare.py` writes them, or
// llm.c's `.bin` files with their 1024-byte header).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_DATA_TEXT_H
#define SINTER_DATA_TEXT_H

#include "sinter/Tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinter::data {

/// The text of `path`: a file, or the files of a folder (recursively, in
/// name order, joined by newlines). Throws when there is none.
std::string read_text(const std::string &path, Loc loc = Loc::current());

/// Token ids of a uint16 token file (raw, or llm.c's format: a 256 x int32
/// header with magic 20240520, version and count, then the tokens).
std::vector<int32_t> read_token_file(const std::string &path, Loc loc = Loc::current());

class Tokenizer {
public:
  virtual ~Tokenizer() = default;
  virtual int64_t vocab_size() const = 0;
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  virtual std::string decode(const std::vector<int32_t> &ids) const = 0;
};

/// One id per byte (256 ids): any text, no vocabulary to learn.
std::unique_ptr<Tokenizer> byte_tokenizer();

/// GPT-2's byte-level BPE: text is split into words (GPT-2's pattern, with
/// Unicode's letters, digits and white space: contractions, letters, digits,
/// other symbols, each with its leading space, and runs of white space; each
/// run of bytes that is not UTF-8 is a word of its own), each word's bytes
/// are mapped to GPT-2's printable characters and merged by rank.
class BpeTokenizer final : public Tokenizer {
public:
  /// Reads GPT-2's `encoder.json` (token -> id) and `vocab.bpe` (merges in
  /// rank order after a "#version" line).
  static BpeTokenizer load(const std::string &encoder_json, const std::string &vocab_bpe,
                           Loc loc = Loc::current());
  /// Learns merges on `text` until the vocabulary has `vocab_size` ids (256
  /// bytes plus merges; fewer when no pair repeats). Deterministic: ties go
  /// to the pair whose merged token sorts first.
  static BpeTokenizer train(std::string_view text, int64_t vocab_size, Loc loc = Loc::current());
  /// Writes `encoder.json` and `vocab.bpe` into `dir` (GPT-2's format).
  void save(const std::string &dir, Loc loc = Loc::current()) const;

  int64_t vocab_size() const override { return static_cast<int64_t>(tokens_.size()); }
  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t> &ids) const override;

private:
  BpeTokenizer() = default;
  void index();
  std::vector<std::string> tokens_;                         // id -> token (GPT-2's characters)
  std::map<std::string, int32_t> ids_;                      // token -> id
  std::vector<std::pair<std::string, std::string>> merges_; // in rank order
  std::map<std::pair<std::string, std::string>, int32_t> ranks_;
};

} // namespace sinter::data

#endif // SINTER_DATA_TEXT_H
