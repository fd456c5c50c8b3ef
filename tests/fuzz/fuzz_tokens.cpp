//===- fuzz_tokens.cpp - uint16 token files, with llm.c's header or not --===//
#include "FuzzInput.h"
#include "sinter/sinter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sinter;
  fuzz::InputFile file(fuzz::bytesOf(data, size), "tokens.bin");
  try {
    std::vector<int32_t> tokens = data::read_token_file(file.path());
    for (int32_t id : tokens)
      if (id < 0 || id > 65535)
        std::abort(); // uint16 ids only
  } catch (const Error &) {
  }
  return 0;
}
