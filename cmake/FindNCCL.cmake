#===- cmake/FindNCCL.cmake - locate NCCL (it ships no CMake package) -----===#
# Defines NCCL_FOUND, NCCL_VERSION and the imported target NCCL::nccl.
# Searches NCCL_ROOT, the CUDA toolkit and the usual system paths.
include(SinterFindCudaLibrary)
sinter_find_cuda_library(NCCL nccl.h nccl nccl.h NCCL_MAJOR NCCL_MINOR NCCL_PATCH)
