// The scalar helpers every generated kernel calls (common/scalar.h) must
// compile under NVRTC as they do for the host: this kernel applies each to
// every element of a grid-stride loop, as a fused kernel would.
#include "common/scalar.h"

extern "C" __global__ void scalar_helpers(const float *x, float *e, long long *wrapped,
                                          float *selected, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    e[i] = sinter_exp(x[i]);
    wrapped[i] = static_cast<long long>(sinter_wrap(static_cast<double>(x[i]) * 1e19));
    selected[i] = sinter_select<float>(x[i] > 0.0f, x[i], -x[i]);
  }
}

// f16 and bf16 in memory, f32 in arithmetic (common/half.h): each element
// read, computed on and rounded back, in both half types.
extern "C" __global__ void half_conversions(const sinter_f16 *a, const sinter_bf16 *b,
                                            sinter_f16 *a2, sinter_bf16 *b2, float *sum,
                                            long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    a2[i] = a[i] * 2.0f;
    b2[i] = sinter_select<float>(b[i] > 0.0f, b[i], a[i]);
    sum[i] = a[i] + b[i];
  }
}
