//===- Ptxas.cpp - CUDA kernels assembled by ptxas, and what they take ----===//
#include "Ptxas.h"

#include "absl/strings/str_cat.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

namespace sinter::tools {

std::vector<KernelResources> parsePtxasReport(const std::string &report) {
  std::vector<KernelResources> kernels;
  std::regex entry(R"(Compiling entry function '([^']+)')"),
      function(R"(Function properties for ([^\s]+))"),
      spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"),
      used(R"(Used (\d+) registers)"), smem(R"((\d+) bytes smem)");
  std::istringstream lines(report);
  std::smatch m;
  // The kernel whose properties follow (a device function's are its own).
  bool inKernel = false;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, m, entry)) {
      kernels.push_back({m[1].str()});
      inKernel = true;
      continue;
    }
    if (std::regex_search(line, m, function)) {
      inKernel = !kernels.empty() && m[1].str() == kernels.back().kernel;
      continue;
    }
    if (!inKernel)
      continue;
    if (std::regex_search(line, m, spills)) {
      kernels.back().spillStores = std::stol(m[1].str());
      kernels.back().spillLoads = std::stol(m[2].str());
    }
    if (std::regex_search(line, m, used))
      kernels.back().registers = std::stol(m[1].str());
    if (std::regex_search(line, m, smem))
      kernels.back().sharedBytes = std::stol(m[1].str());
  }
  return kernels;
}

std::string resourceProblem(const KernelResources &kernel, long threads) {
  if (kernel.spillStores > 0 || kernel.spillLoads > 0)
    return "spills";
  if (kernel.registers * threads > 65536)
    return "registers x threads above 65536";
  if (kernel.sharedBytes > 48 * 1024)
    return "more than 48 KiB of static shared memory";
  return "";
}

std::string findPtxas() {
  std::vector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0')
    candidates.push_back(std::string(home) + "/bin/ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  if (const char *path = std::getenv("PATH")) {
    std::istringstream folders(path);
    for (std::string folder; std::getline(folders, folder, ':');)
      if (!folder.empty())
        candidates.push_back(folder + "/ptxas");
  }
  for (const std::string &candidate : candidates)
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  return "";
}

StatusOr<std::string> assemble(const std::string &ptxas, const std::string &ptxPath,
                               const std::string &arch, const std::string &cubinPath, bool report) {
  std::string command = ptxas + (report ? " -v" : "") + " -arch=sm_" + arch + " " + ptxPath +
                        " -o " + cubinPath + " 2>&1";
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  if (pipe == nullptr)
    return absl::InternalError(absl::StrCat("cannot run ", ptxas));
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;)
    output.append(chunk, n);
  int status = pclose(pipe);
  if (status != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "ptxas (exit ", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), ") on ",
        ptxPath, ":\n", output));
  return output;
}

} // namespace sinter::tools
