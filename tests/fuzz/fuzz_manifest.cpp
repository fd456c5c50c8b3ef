//===- fuzz_manifest.cpp - artifact manifests ----------------------------===//
//
// Any bytes as an artifact's manifest.json, in a folder of their own:
// runtime::Artifact::open refuses them with a Status (they name files the
// folder does not hold, at best) and never crashes or allocates what they
// claim.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "sinter/runtime/Artifact.h"

#include <filesystem>
#include <string>

#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string dir = [] {
    std::string path = std::filesystem::temp_directory_path().string() + "/sinter-fuzz-manifest-" +
                       std::to_string(getpid()) + ".sinter";
    std::filesystem::create_directories(path);
    return path;
  }();
  {
    FILE *file = std::fopen((dir + "/manifest.json").c_str(), "wb");
    if (file == nullptr)
      std::abort();
    std::fwrite(data, 1, size, file);
    std::fclose(file);
  }
  (void)sinter::runtime::Artifact::open(dir);
  return 0;
}
