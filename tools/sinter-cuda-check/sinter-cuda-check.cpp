//===- sinter-cuda-check.cpp - compile CUDA sources as the GPU backend will ===//
//
// Compiles each CUDA C++ file with NVRTC (the runtime compiler the CUDA
// backend uses, with the kernels/ helpers on the include path) to PTX for a
// virtual architecture, then assembles the PTX with ptxas for the real one.
// Neither step needs a GPU, so CI checks that device code builds for sm_90.
// With --threads N it also reads ptxas's resource report and fails on a
// kernel that spills, whose registers times N threads a block exceed the
// 65,536 of a multiprocessor, or that declares more than 48 KiB of static
// shared memory; it prints each kernel's registers, spills and shared bytes.
//
//   sinter-cuda-check [--arch 90] [--keep DIR] [--threads N] file.cu...
//
//===----------------------------------------------------------------------===//
#include "Ptxas.h"

#include "sinter/runtime/Nvrtc.h"

#include <algorithm>
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
  long threads = 0;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--arch" && i + 1 < argc) {
      arch = argv[++i];
    } else if (arg == "--keep" && i + 1 < argc) {
      keep = argv[++i];
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = std::atol(argv[++i]);
      if (threads < 1 || threads > 1024) {
        std::fprintf(stderr, "sinter-cuda-check: --threads %s is not 1..1024\n", argv[i]);
        return 2;
      }
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: sinter-cuda-check [--arch 90] [--keep DIR] [--threads N] file.cu...\n"
                  "Compiles each file with NVRTC to PTX and assembles it with ptxas;\n"
                  "with --threads, fails on spills, registers x N above 65536 or\n"
                  "more than 48 KiB of static shared memory.\n");
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
    sinter::StatusOr<std::string> compiled =
        sinter::cuda::compileWithNvrtc({.path = file,
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
    sinter::StatusOr<std::string> report =
        sinter::tools::assemble(SINTER_PTXAS, ptxPath, arch, cubin, threads > 0);
    if (!report.ok()) {
      std::fprintf(stderr, "FAIL  %s: %s\n", file.c_str(),
                   std::string(report.status().message()).c_str());
      ++failures;
      continue;
    }
    if (threads > 0) {
      std::vector<sinter::tools::KernelResources> kernels =
          sinter::tools::parsePtxasReport(*report);
      long most = 0;
      bool bad = kernels.empty();
      if (kernels.empty())
        std::fprintf(stderr, "FAIL  %s: ptxas reported no kernel\n", file.c_str());
      for (const sinter::tools::KernelResources &k : kernels) {
        most = std::max(most, k.registers);
        std::string why = sinter::tools::resourceProblem(k, threads);
        std::printf("  %s sm_%s: registers %ld, spill_stores %ld, spill_loads %ld, shared_bytes "
                    "%ld, threads %ld%s\n",
                    k.kernel.c_str(), arch.c_str(), k.registers, k.spillStores, k.spillLoads,
                    k.sharedBytes, threads, why.empty() ? "" : ("  FAIL: " + why).c_str());
        bad = bad || !why.empty();
      }
      if (bad) {
        ++failures;
        continue;
      }
      std::printf("      %s: %zu kernels, at most %ld registers, no spills\n", file.c_str(),
                  kernels.size(), most);
    }
    std::printf("OK    %s: NVRTC compute_%s -> PTX (%zu bytes) -> ptxas sm_%s (%ju bytes)\n",
                file.c_str(), arch.c_str(), ptx.size(), arch.c_str(),
                static_cast<uintmax_t>(std::filesystem::file_size(cubin)));
  }
  if (keep.empty())
    std::filesystem::remove_all(work);
  return failures == 0 ? 0 : 1;
}
