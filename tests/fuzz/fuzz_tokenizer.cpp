//===- fuzz_tokenizer.cpp - GPT-2's encoder.json and vocab.bpe -----------===//
//
// The input up to its first NUL byte is encoder.json, the rest vocab.bpe:
// loaded, or refused with a sinter::Error; a vocabulary that loads encodes
// a text and decodes it back to the same bytes.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "sinter/sinter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sinter;
  std::string_view bytes = fuzz::bytesOf(data, size);
  size_t nul = bytes.find('\0');
  std::string_view encoder = bytes.substr(0, nul);
  std::string_view merges = nul == std::string_view::npos ? "" : bytes.substr(nul + 1);
  fuzz::InputFile encoderFile(encoder, "encoder.json"), mergesFile(merges, "vocab.bpe");
  try {
    data::BpeTokenizer tokenizer = data::BpeTokenizer::load(encoderFile.path(), mergesFile.path());
    const std::string text = "Hello, world! It's 2026:\n\tbytes \xc3\xa9\xff.";
    if (tokenizer.decode(tokenizer.encode(text)) != text)
      std::abort(); // a byte-level vocabulary that loads round-trips any text
  } catch (const Error &) {
  }
  return 0;
}
