// The kernel helpers generated CUDA code includes must compile under NVRTC:
// this kernel draws Philox numbers as the CUDA backend will (dropout masks,
// randn), for every element of a grid-stride loop.
#include "common/philox.h"

// `draw` holds the seed, the stream and the count (a Program's kernels take
// device pointers only, and the test launches this one as it launches them).
extern "C" __global__ void philox_fill(float *uniform, float *normal,
                                       const unsigned long long *draw) {
  const unsigned long long seed = draw[0], stream = draw[1];
  const long long n = (long long)draw[2];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    uniform[i] = sinter::kernels::philoxUniform(seed, stream, (unsigned long long)i);
    normal[i] = sinter::kernels::philoxNormal(seed, stream, (unsigned long long)i);
  }
}
