#===- cmake/FindCUDNN.cmake - locate cuDNN 9 (it ships no CMake package) --===#
# Defines CUDNN_FOUND, CUDNN_VERSION and the imported target CUDNN::cudnn.
# Searches CUDNN_ROOT, the CUDA toolkit and the usual system paths.
include(SinterFindCudaLibrary)
sinter_find_cuda_library(CUDNN cudnn_version.h cudnn cudnn_version.h
  CUDNN_MAJOR CUDNN_MINOR CUDNN_PATCHLEVEL)
