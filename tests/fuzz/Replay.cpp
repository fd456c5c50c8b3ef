//===- Replay.cpp - runs a fuzzer's inputs without libFuzzer ---------------===//
//
// Built with the host compiler into `replay_<reader>`: every file named on
// the command line (a folder: every file in it) goes through the fuzzer's
// LLVMFuzzerTestOneInput once, so the seed corpora and every input that
// once found a crash (tests/fuzz/regressions/) run in the test suite. An
// input named that does not exist fails the replay.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const fs::directory_entry &entry : fs::recursive_directory_iterator(argv[i]))
        if (entry.is_regular_file())
          inputs.push_back(entry.path());
    } else if (fs::exists(argv[i])) {
      inputs.push_back(argv[i]);
    } else {
      // A regression that went missing would otherwise pass unseen.
      std::fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs\n");
    return 2;
  }
  for (const fs::path &input : inputs) {
    std::ifstream in(input, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  return 0;
}
