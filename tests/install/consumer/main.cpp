// Uses the installed Sinter: the C++ API and the runtime alone.
#include <sinter/runtime/CudaDriver.h>
#include <sinter/sinter.h>

#include <cstdio>

int main() {
  std::printf("Sinter %s, best device %s, %d CUDA device(s)\n", sinter::kVersion,
              sinter::Device::best().toString().c_str(), sinter::cuda::deviceCount());
  if (sinter::elementSize(sinter::dtypeFromString("bf16")) != 2)
    return 1;
  try {
    sinter::Device::parse("tpu");
  } catch (const sinter::Error &error) {
    std::printf("caught: %s\n", error.what());
    return 0;
  }
  return 1;
}
