//===- host_device.h - code that the host compiler and NVRTC both compile -===//
//
// kernels/common/ holds what generated kernels include on every target:
// plain C++ that the host compiler builds for the CPU's kernels and NVRTC
// for the GPU's, the same text (Note [Launch shapes] and DESIGN's decision
// that the scalar math exists once). Under CUDA its functions are
// __host__ __device__; NVRTC provides no standard headers, so these files
// include none under it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_KERNELS_COMMON_HOST_DEVICE_H
#define SINTER_KERNELS_COMMON_HOST_DEVICE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SINTER_HOST_DEVICE __host__ __device__
#define SINTER_ON_DEVICE 1
#else
#define SINTER_HOST_DEVICE
#define SINTER_ON_DEVICE 0
#endif

#endif // SINTER_KERNELS_COMMON_HOST_DEVICE_H
