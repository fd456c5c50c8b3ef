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
#include "CommandLine.h"
#include "Ptxas.h"

#include "sinter/runtime/Nvrtc.h"

#include <algorithm>
#include <cstdio>
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
  CLI::App app{"Compiles each file with NVRTC to PTX and assembles it with ptxas; with --threads, "
               "fails on spills, registers x N above 65536 or more than 48 KiB of static shared "
               "memory.",
               "sinter-cuda-check"};
  std::string arch = "90", keep;
  long threads = 0;
  std::vector<std::string> files;
  app.add_option("--arch", arch, "the GPU architecture, as a number (90: compute_90 and sm_90)")
      ->capture_default_str();
  app.add_option("--keep", keep, "write the PTX and cubins to this folder and keep them");
  app.add_option("--threads", threads,
                 "threads a block: check each kernel's registers, spills and shared memory for "
                 "it, and print them")
      ->check(CLI::Range(1, 1024));
  app.add_option("files", files, "CUDA C++ files")->required();
  if (std::optional<int> status = sinter::tools::parseCommandLine(app, argc, argv))
    return *status;
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
