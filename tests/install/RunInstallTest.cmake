#===- RunInstallTest.cmake - install Sinter, build an outside project -----===#
# Installs the build tree into a fresh prefix, configures and builds
# consumer/ against it with find_package(Sinter CONFIG REQUIRED), and runs the
# result and an installed tool.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

include("${CMAKE_CURRENT_LIST_DIR}/RunStep.cmake")

run_step("install" ${CMAKE_COMMAND} --install "${SINTER_BUILD_DIR}" --prefix "${prefix}")
foreach(file include/sinter/sinter.h include/sinter/runtime/Status.h
             include/sinter/Compiler/StepCompiler.h include/sinter/kernels/common/philox.h
             lib/cmake/Sinter/SinterConfig.cmake bin/sinter-opt bin/sinter-info)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()
run_step("configure consumer" ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/consumer"
  -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}")
run_step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer")
# The consumer's steps run compiled: kernels built into a fresh cache, with
# the kernel helpers installed next to the compiler library.
run_step("run consumer" ${CMAKE_COMMAND} -E env "SINTER_CACHE_DIR=${WORK_DIR}/kernel-cache"
  "${WORK_DIR}/consumer/consumer")
# The same program, unchanged, on cuda:0 with the CUDA simulator standing
# for the GPU: its CUDA kernels built against the installed prelude and
# runtime headers, linked with the installed simulator.
run_step("run consumer on the CUDA simulator" ${CMAKE_COMMAND} -E env
  "SINTER_CACHE_DIR=${WORK_DIR}/kernel-cache" SINTER_DEVICE=cuda SINTER_CUDA_SIMULATOR=1
  "${WORK_DIR}/consumer/consumer")
if(NOT output MATCHES "loss [0-9.]+ -> [0-9.]+, 150 of 150 steps compiled on cuda:0")
  message(FATAL_ERROR "the consumer on the CUDA simulator said:\n${output}")
endif()
run_step("run installed sinter-info" "${prefix}/bin/sinter-info")
run_step("run installed sinter-opt" "${prefix}/bin/sinter-opt" --show-dialects)
