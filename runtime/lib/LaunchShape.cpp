//===- LaunchShape.cpp - what CUDA takes of a launch ----------------------===//
#include "sinter/runtime/LaunchShape.h"

#include "absl/strings/str_cat.h"

namespace sinter::runtime {

Status checkCudaLaunchShape(const std::string &kernel, const LaunchShape &shape) {
  constexpr int64_t kGridLimit[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
  constexpr int64_t kBlockLimit[3] = {1024, 1024, 64};
  int64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (shape.grid[d] < 1 || shape.grid[d] > kGridLimit[d] || shape.block[d] < 1 ||
        shape.block[d] > kBlockLimit[d])
      return absl::InvalidArgumentError(absl::StrCat(
          "launch of '", kernel, "': grid ", shape.grid[0], "x", shape.grid[1], "x", shape.grid[2],
          ", block ", shape.block[0], "x", shape.block[1], "x", shape.block[2],
          " is outside CUDA's limits (grid up to 2^31-1 x 65535 x 65535, block up to "
          "1024 x 1024 x 64)"));
    threads *= shape.block[d];
  }
  if (threads > 1024 || shape.sharedBytes < 0 || shape.sharedBytes > UINT32_MAX)
    return absl::InvalidArgumentError(absl::StrCat(
        "launch of '", kernel, "': ", threads, " threads a block and ", shape.sharedBytes,
        " bytes of dynamic shared memory (CUDA takes at most 1024 threads a block)"));
  return absl::OkStatus();
}

} // namespace sinter::runtime
