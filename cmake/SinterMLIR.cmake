#===- cmake/SinterMLIR.cmake - how Sinter's MLIR-based targets are built --===#
# Debian's LLVM/MLIR 19 is built with RTTI and without exceptions, and ships
# libMLIR.so and libLLVM.so. Sinter's compiler targets link those two shared
# libraries (fast links, one copy of every registry) and compile with
# -fno-exceptions like LLVM itself. Everything else in Sinter uses exceptions.

# sinter_mlir_target(<target>): give <target> MLIR's headers, definitions and
# libraries, and LLVM's exception/RTTI settings.
function(sinter_mlir_target target)
  target_include_directories(${target} SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  separate_arguments(_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
  target_compile_definitions(${target} PUBLIC ${_llvm_defs})
  if(NOT LLVM_ENABLE_EH)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions>)
  endif()
  if(NOT LLVM_ENABLE_RTTI)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-rtti>)
  endif()
  target_link_libraries(${target} PUBLIC MLIR LLVM)
  # An AddressSanitizer build: LLVM's headers would poison the free space of
  # LLVM's bump allocators from Sinter's instrumented code, which the
  # uninstrumented copies in Debian's libMLIR.so then hand out unpoisoned
  # (false reports). Code that includes LLVM headers sees no ASan macro; the
  # runtime, which includes none, keeps it (its arena poisoning, Note
  # [Poisoned arenas]).
  if(SINTER_SANITIZE MATCHES "address")
    target_compile_options(${target} PUBLIC -U__SANITIZE_ADDRESS__)
  endif()
  sinter_set_warnings(${target})
endfunction()

# sinter_mlir_directory(): every target of the calling folder sees LLVM's and
# MLIR's headers (and, in an ASan build, no ASan macro, as above).
macro(sinter_mlir_directory)
  include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  if(SINTER_SANITIZE MATCHES "address")
    add_compile_options(-U__SANITIZE_ADDRESS__)
  endif()
endmacro()
