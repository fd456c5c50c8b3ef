// Hand-written kernels with known results, for the CUDA simulator's own
// semantics (tests/unit/runtime/SimtTest.cpp runs them against
// kernels/cuda/simt.h) and compiled by NVRTC and ptxas as they are
// (cuda.nvrtc_ptxas_sm90): barriers and shared memory, warp shuffles and
// votes, atomics, and the bugs the simulator must report.

// Each block sums its blockDim.x (a power of two, at most 256) inputs: a
// shared-memory tree with a barrier per level.
extern "C" __global__ void block_sum(const float *x, float *sums) {
  __shared__ float partial[256];
  unsigned t = threadIdx.x;
  partial[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half)
      partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0)
    sums[blockIdx.x] = partial[0];
}

// Each warp sums its 32 inputs with shuffles (down, then a broadcast from
// lane 0 checked by xor), and counts its negative inputs with a ballot.
extern "C" __global__ void warp_sum(const float *x, float *sums, unsigned *negatives) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  unsigned ballot = __ballot_sync(0xffffffffu, v < 0.0f);
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  float total = __shfl_sync(0xffffffffu, v, 0);
  float mirrored = __shfl_xor_sync(0xffffffffu, total, 31);
  if ((threadIdx.x & 31) == 0) {
    sums[i / 32] = total == mirrored ? total : -1.0f;
    unsigned count = 0;
    for (; ballot != 0; ballot &= ballot - 1)
      ++count;
    negatives[i / 32] = count;
  }
}

// Split masks and segments: each half warp swaps neighbours under its own
// mask, then the whole warp reads lane 0 of its 8-lane segment, shifts up
// by one within segments, sums each segment by xor, and reads lane -1
// (lane 31: a source lane is taken modulo the width).
extern "C" __global__ void segments(const int *x, int *out) {
  unsigned lane = threadIdx.x & 31;
  int v = x[threadIdx.x];
  unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  int swapped = __shfl_xor_sync(half, v, 1);
  int first = __shfl_sync(0xffffffffu, v, 0, 8);
  int up = __shfl_up_sync(0xffffffffu, v, 1, 8);
  int sum = v;
  for (int m = 4; m > 0; m /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, m, 8);
  int last = __shfl_sync(0xffffffffu, v, -1);
  int *o = out + threadIdx.x * 5;
  o[0] = swapped;
  o[1] = first;
  o[2] = up;
  o[3] = sum;
  o[4] = last;
}

// A histogram of n values into 16 bins, by atomics from every block.
extern "C" __global__ void histogram(const int *values, int n, unsigned *bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[values[i] & 15], 1); // an int converted, as CUDA's overloads take it
}

// out[t] = x[t - 1] through shared memory, with the barrier and without it:
// without, a thread may read its neighbour's slot before it is written.
extern "C" __global__ void shift_synced(const float *x, float *out) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  out[t] = t > 0 ? s[t - 1] : 0.0f;
}
extern "C" __global__ void shift_racy(const float *x, float *out) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  out[t] = t > 0 ? s[t - 1] : 0.0f;
}

// Bugs. An early return before a barrier in a partly filled block.
extern "C" __global__ void early_return(const float *x, float *out, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  s[threadIdx.x] = x[i];
  __syncthreads();
  out[i] = s[threadIdx.x] * 2.0f;
}
// A shuffle that half the warp never reaches.
extern "C" __global__ void half_warp_shuffle(float *x) {
  float v = x[threadIdx.x];
  if (threadIdx.x % 32 < 16)
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  x[threadIdx.x] = v;
}
// One element past the end.
extern "C" __global__ void off_by_one(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n)
    out[i] = 1.0f;
}
