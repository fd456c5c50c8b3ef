#===- RunEmbedTest.cmake - examples/embed against the installed package ---===#
# Installs Sinter into a fresh prefix; compiles the mlp artifact with the
# installed sinter-compile (the job's hyperparameters and schedule); builds
# examples/embed/c and examples/embed/cpp with find_package(Sinter) and no
# RPATH; trains each for an epoch of Fashion-MNIST in an environment whose
# LD_LIBRARY_PATH holds only the installed libraries, whose PATH holds only
# gzip (no compiler) and whose HOME is empty; checks that each reaches the
# job's test accuracy (85%, tests/e2e/train_jobs.py), that the Python
# example's accuracy from the C program's checkpoint is the C program's, and
# that an artifact a program exported itself (sinter-compile --program)
# trains to that accuracy too, and that `sinter-train --resume` continues from that checkpoint and leaves it
# as it was.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(artifact "${WORK_DIR}/mlp.sinter")
set(data /usr/share/datasets/fashion-mnist)

include("${CMAKE_CURRENT_LIST_DIR}/RunStep.cmake")

# The accuracy an example printed ("test accuracy 85.12% (10000 images)").
function(accuracy_of what text)
  if(NOT text MATCHES "test accuracy ([0-9]+\\.[0-9]+)% \\(10000 images\\)")
    message(FATAL_ERROR "${what} printed no test accuracy of the 10000 test images:\n${text}")
  endif()
  if(CMAKE_MATCH_1 LESS 85)
    message(FATAL_ERROR "${what}: test accuracy ${CMAKE_MATCH_1}%, below the job's 85%")
  endif()
  set(accuracy "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

run_step("install" ${CMAKE_COMMAND} --install "${SINTER_BUILD_DIR}" --prefix "${prefix}")
run_step("sinter-compile" ${CMAKE_COMMAND} -E env "SINTER_CACHE_DIR=${WORK_DIR}/kernel-cache"
  "${prefix}/bin/sinter-compile" --model mlp --batch-size 64 --learning-rate 0.002
  --weight-decay 0.0001 --schedule warmup-cosine:50:938:0.0001 -o "${artifact}")

# What the examples run with: the installed libraries and gzip, nothing else.
find_program(GZIP gzip REQUIRED)
file(MAKE_DIRECTORY "${WORK_DIR}/bin" "${WORK_DIR}/home")
file(CREATE_LINK "${GZIP}" "${WORK_DIR}/bin/gzip" SYMBOLIC)
set(bare_env ${CMAKE_COMMAND} -E env --unset=CXX --unset=CC --unset=SINTER_CACHE_DIR
  "PATH=${WORK_DIR}/bin" "HOME=${WORK_DIR}/home" "LD_LIBRARY_PATH=${prefix}/lib")

foreach(language c cpp)
  set(build "${WORK_DIR}/${language}")
  run_step("configure examples/embed/${language}" ${CMAKE_COMMAND}
    -S "${SOURCE_DIR}/examples/embed/${language}" -B "${build}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_SKIP_RPATH=ON)
  run_step("build examples/embed/${language}" ${CMAKE_COMMAND} --build "${build}")
  run_step("run examples/embed/${language}" ${bare_env} "${build}/train" "${artifact}" "${data}"
    "${WORK_DIR}/${language}.safetensors")
  accuracy_of("examples/embed/${language}" "${output}")
  set(accuracy_${language} "${accuracy}")
  file(GLOB written RELATIVE "${WORK_DIR}/home" "${WORK_DIR}/home/*")
  if(written)
    message(FATAL_ERROR "examples/embed/${language} wrote under HOME: ${written}")
  endif()
endforeach()

# A program's own training step (sinter-compile --program): the example
# trainer exports its mlp step for another CPU level; the C example trains
# it to the job's accuracy too.
set(program_artifact "${WORK_DIR}/program.sinter")
run_step("sinter-compile --program" ${CMAKE_COMMAND} -E env
  "SINTER_CACHE_DIR=${WORK_DIR}/kernel-cache" "${prefix}/bin/sinter-compile"
  --program "${TRAIN_EXAMPLE}" --cpu x86-64-v2 -o "${program_artifact}"
  -- --model mlp --batch_size 64 --epochs 1 --lr 0.002 "--data_dir=${data}")
if(NOT output MATCHES "wrote [^\n]*program.sinter: model mlp from [^\n]*sinter-train-example for x86_64-linux-gnu \\(x86-64-v2\\)\n")
  message(FATAL_ERROR "sinter-compile --program did not say what it wrote:\n${output}")
endif()
run_step("run examples/embed/c on the program's artifact" ${bare_env} "${WORK_DIR}/c/train"
  "${program_artifact}" "${data}" "${WORK_DIR}/program.safetensors")
accuracy_of("examples/embed/c on the program's artifact" "${output}")

run_step("run examples/embed/python" ${bare_env} "${PYTHON}"
  "${SOURCE_DIR}/examples/embed/python/predict.py" "${artifact}" "${WORK_DIR}/c.safetensors"
  "${data}")
accuracy_of("examples/embed/python" "${output}")
if(NOT accuracy STREQUAL accuracy_c)
  message(FATAL_ERROR "the Python example's accuracy of the C program's checkpoint is "
                      "${accuracy}%, the C program's ${accuracy_c}%")
endif()

file(SHA256 "${WORK_DIR}/c.safetensors" before)
run_step("sinter-train --resume" ${CMAKE_COMMAND} -E env "SINTER_CACHE_DIR=${WORK_DIR}/kernel-cache"
  "${prefix}/bin/sinter-train" --config "${SOURCE_DIR}/examples/jobs/mlp-fashion-mnist.json"
  --epochs 2 --set compare_eager_steps=0 --output-dir "${WORK_DIR}/resumed"
  --resume "${WORK_DIR}/c.safetensors")
if(NOT output MATCHES "resumed from the artifact session's state [^\n]* at step 937 ")
  message(FATAL_ERROR "sinter-train did not resume at the session's step 937:\n${output}")
endif()
if(NOT output MATCHES "test at step 1874: loss [0-9.]+, accuracy ([0-9.]+)%")
  message(FATAL_ERROR "sinter-train did not evaluate its second epoch:\n${output}")
endif()
if(CMAKE_MATCH_1 LESS 85)
  message(FATAL_ERROR "the resumed job's accuracy is ${CMAKE_MATCH_1}%, below 85%")
endif()
file(SHA256 "${WORK_DIR}/c.safetensors" after)
if(NOT before STREQUAL after OR NOT EXISTS "${WORK_DIR}/resumed/checkpoint.safetensors")
  message(FATAL_ERROR "sinter-train changed the session's checkpoint or wrote none of its own")
endif()

# Another model's job refuses the session's state, naming both models.
execute_process(COMMAND ${CMAKE_COMMAND} -E env "SINTER_CACHE_DIR=${WORK_DIR}/kernel-cache"
  "${prefix}/bin/sinter-train" --model lenet --steps 1 --output-dir "${WORK_DIR}/lenet"
  --resume "${WORK_DIR}/c.safetensors"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "the checkpoint [^\n]*c.safetensors has model mlp, this job lenet")
  message(FATAL_ERROR "sinter-train --model lenet took the mlp session's state (${rc}):\n${out}\n${err}")
endif()
