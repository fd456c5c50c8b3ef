// The kernel helpers generated CUDA code includes must compile under NVRTC:
// this kernel draws Philox numbers as the CUDA backend will (dropout masks,
// randn), for every element of a grid-stride loop.
#include "common/philox.h"

extern "C" __global__ void philox_fill(float *uniform, float *normal, unsigned long long seed,
                                       unsigned long long stream, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    uniform[i] = sinter::kernels::philoxUniform(seed, stream, (unsigned long long)i);
    normal[i] = sinter::kernels::philoxNormal(seed, stream, (unsigned long long)i);
  }
}
