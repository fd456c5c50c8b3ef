//===- Nvrtc.cpp - compile CUDA C++ with NVRTC ----------------------------===//
#include "Nvrtc.h"

#include <nvrtc.h>

#include <vector>

namespace sinter::cuda {

bool compileWithNvrtc(const std::string &path, const std::string &source, const std::string &arch,
                      const std::string &includeDir, NvrtcOutput output, std::string &image,
                      std::string &log) {
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), path.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    log = "nvrtcCreateProgram failed";
    return false;
  }
  bool cubin = output == NvrtcOutput::Cubin;
  std::string archFlag = (cubin ? "--gpu-architecture=sm_" : "--gpu-architecture=compute_") + arch;
  std::string include = "--include-path=" + includeDir;
  std::vector<const char *> options = {archFlag.c_str(), include.c_str(), "--std=c++17"};
  nvrtcResult result =
      nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  log.assign(logSize, '\0');
  nvrtcGetProgramLog(program, log.data());
  if (result == NVRTC_SUCCESS) {
    size_t size = 0;
    if (cubin) {
      nvrtcGetCUBINSize(program, &size);
      image.assign(size, '\0');
      nvrtcGetCUBIN(program, image.data());
    } else {
      nvrtcGetPTXSize(program, &size);
      image.assign(size, '\0');
      nvrtcGetPTX(program, image.data());
      while (!image.empty() && image.back() == '\0') // the size counts the terminator
        image.pop_back();
    }
  } else {
    log = std::string(nvrtcGetErrorString(result)) + "\n" + log;
  }
  nvrtcDestroyProgram(&program);
  return result == NVRTC_SUCCESS;
}

} // namespace sinter::cuda
