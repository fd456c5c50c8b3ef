#===- cmake/SinterFindCudaLibrary.cmake - find a CUDA library without a package ===#
# sinter_find_cuda_library(<Pkg> <header> <library> <version-header> <MAJOR> <MINOR> <PATCH>)
# finds <library> and <header> under <Pkg>_ROOT, the CUDA toolkit and system
# paths, reads the version from the three #define names in <version-header>,
# and defines <Pkg>_FOUND, <Pkg>_VERSION and the imported target <Pkg>::<library>.
include(FindPackageHandleStandardArgs)

function(sinter_find_cuda_library pkg header library version_header major minor patch)
  set(hints ${${pkg}_ROOT} $ENV{${pkg}_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_DIR}
            /usr/local/cuda)
  find_path(${pkg}_INCLUDE_DIR ${header} HINTS ${hints} PATH_SUFFIXES include)
  find_library(${pkg}_LIBRARY ${library} HINTS ${hints} PATH_SUFFIXES lib64 lib)
  mark_as_advanced(${pkg}_INCLUDE_DIR ${pkg}_LIBRARY)

  set(version_file "${${pkg}_INCLUDE_DIR}/${version_header}")
  if(${pkg}_INCLUDE_DIR AND EXISTS "${version_file}")
    set(parts)
    foreach(name ${major} ${minor} ${patch})
      file(STRINGS "${version_file}" line REGEX "^#define ${name} +[0-9]+")
      string(REGEX REPLACE "^#define ${name} +([0-9]+).*" "\\1" value "${line}")
      list(APPEND parts "${value}")
    endforeach()
    list(JOIN parts "." ${pkg}_VERSION)
  endif()

  find_package_handle_standard_args(${pkg}
    REQUIRED_VARS ${pkg}_LIBRARY ${pkg}_INCLUDE_DIR
    VERSION_VAR ${pkg}_VERSION)
  set(${pkg}_FOUND ${${pkg}_FOUND} PARENT_SCOPE)
  set(${pkg}_VERSION ${${pkg}_VERSION} PARENT_SCOPE)

  if(${pkg}_FOUND AND NOT TARGET ${pkg}::${library})
    add_library(${pkg}::${library} SHARED IMPORTED GLOBAL)
    set_target_properties(${pkg}::${library} PROPERTIES
      IMPORTED_LOCATION "${${pkg}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${${pkg}_INCLUDE_DIR}")
  endif()
endfunction()
