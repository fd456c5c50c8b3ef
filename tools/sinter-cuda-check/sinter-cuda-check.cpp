//===- sinter-cuda-check.cpp - compile CUDA sources as the GPU backend will ===//
//
// Compiles each CUDA C++ file with NVRTC (the runtime compiler the CUDA
// backend uses, with the kernels/ helpers on the include path) to PTX for a
// virtual architecture, then assembles the PTX with ptxas for the real one.
// Neither step needs a GPU, so CI checks that device code builds for sm_90.
//
//   sinter-cuda-check [--arch 90] [--keep DIR] file.cu...
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Nvrtc.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

bool readFile(const std::string &path, std::string &text) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string arch = "90", keep;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--arch" && i + 1 < argc) {
      arch = argv[++i];
    } else if (arg == "--keep" && i + 1 < argc) {
      keep = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: sinter-cuda-check [--arch 90] [--keep DIR] file.cu...\n"
                  "Compiles each file with NVRTC to PTX and assembles it with ptxas.\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "sinter-cuda-check: unknown flag '%s' (see --help)\n", arg.c_str());
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "sinter-cuda-check: no input files (see --help)\n");
    return 2;
  }
  std::filesystem::path work = keep.empty() ? std::filesystem::temp_directory_path() /
                                                  ("sinter-cuda-check-" + std::to_string(getpid()))
                                            : std::filesystem::path(keep);
  std::filesystem::create_directories(work);
  int failures = 0;
  for (const std::string &file : files) {
    std::string source;
    if (!readFile(file, source)) {
      std::fprintf(stderr, "sinter-cuda-check: cannot read %s\n", file.c_str());
      ++failures;
      continue;
    }
    sinter::StatusOr<std::string> compiled = sinter::cuda::compileWithNvrtc(
        {.path = file,
         .source = source,
         .arch = arch,
         .output = sinter::cuda::NvrtcOutput::Ptx,
         .includeDirs = {SINTER_KERNELS_INCLUDE_DIR}});
    if (!compiled.ok()) {
      std::fprintf(stderr, "FAIL  %s: %s\n", file.c_str(),
                   std::string(compiled.status().message()).c_str());
      ++failures;
      continue;
    }
    const std::string &ptx = *compiled;
    std::filesystem::path stem = work / std::filesystem::path(file).stem();
    std::string ptxPath = stem.string() + ".ptx", cubin = stem.string() + ".cubin";
    std::ofstream(ptxPath) << ptx;
    std::string command =
        std::string(SINTER_PTXAS) + " -arch=sm_" + arch + " " + ptxPath + " -o " + cubin + " 2>&1";
    int status = std::system(command.c_str());
    if (status != 0) {
      std::fprintf(stderr, "FAIL  %s: ptxas (exit %d) on %s\n", file.c_str(), status,
                   ptxPath.c_str());
      ++failures;
      continue;
    }
    std::printf("OK    %s: NVRTC compute_%s -> PTX (%zu bytes) -> ptxas sm_%s (%ju bytes)\n",
                file.c_str(), arch.c_str(), ptx.size(), arch.c_str(),
                static_cast<uintmax_t>(std::filesystem::file_size(cubin)));
  }
  if (keep.empty())
    std::filesystem::remove_all(work);
  return failures == 0 ? 0 : 1;
}
