//===- sinter-info.cpp - what Sinter sees on this machine -----------------===//
//
// Prints Sinter's version and the devices it can run on. Without a GPU it
// says why none is usable (no driver, only the toolkit stub, no device) and
// exits 0: the CPU backend is always there. `--require-cuda` makes a missing
// CUDA device an error (exit 1), for scripts such as tools/gpu_check.sh.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"

#include "sinter/runtime/CudaDriver.h"
#include "sinter/sinter.h"

#include <cstdio>

int main(int argc, char **argv) {
  CLI::App app{"Prints Sinter's version and the devices it can run on.", "sinter-info"};
  bool requireCuda = false;
  app.add_flag("--require-cuda", requireCuda, "exit with status 1 when no CUDA device is usable");
  if (std::optional<int> status = sinter::tools::parseCommandLine(app, argc, argv))
    return *status;

  std::printf("Sinter %s\n", sinter::kVersion);
  std::printf("device cpu: available\n");
  sinter::StatusOr<std::vector<sinter::cuda::DeviceInfo>> devices = sinter::cuda::listDevices();
  if (!devices.ok()) {
    std::printf("device cuda: unavailable (%s)\n", std::string(devices.status().message()).c_str());
    return requireCuda ? 1 : 0;
  }
  sinter::StatusOr<int> version = sinter::cuda::driverVersion();
  if (version.ok())
    std::printf("CUDA driver %d.%d\n", *version / 1000, (*version % 1000) / 10);
  for (const sinter::cuda::DeviceInfo &device : *devices)
    std::printf("device cuda:%d: %s, %.1f GiB, compute capability %d.%d\n", device.ordinal,
                device.name.c_str(), static_cast<double>(device.totalMemoryBytes) / (1ull << 30),
                device.computeCapabilityMajor, device.computeCapabilityMinor);
  std::printf("best device: %s\n", sinter::Device::best().toString().c_str());
  return 0;
}
