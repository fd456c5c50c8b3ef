// f16 and bf16 conversions (common/half.h) on the GPU, for the bitwise
// comparison with the host's (HalfOnGpu in PhiloxDeviceTest.cpp): every
// f16 and bf16 pattern read, and a stride through every f32 pattern (each
// 4099th) rounded to both.
#include "common/half.h"

extern "C" __global__ void half_conversions_all(unsigned short *f16_of_f32,
                                                unsigned short *bf16_of_f32, float *f32_of_f16,
                                                float *f32_of_bf16, const long long *count) {
  const long long n = *count;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float x =
        sinter_bits_float(static_cast<unsigned>(static_cast<unsigned long long>(i) * 4099ull));
    f16_of_f32[i] = sinter_f16_bits(x);
    bf16_of_f32[i] = sinter_bf16_bits(x);
    if (i < 65536) {
      f32_of_f16[i] = sinter_f16_float(static_cast<unsigned short>(i));
      f32_of_bf16[i] = sinter_bf16_float(static_cast<unsigned short>(i));
    }
  }
}
