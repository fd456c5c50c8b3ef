#===- RunStep.cmake - one step of an install test --------------------------===#
# run_step(WHAT COMMAND...): runs COMMAND; stops the test naming WHAT, with
# the command's output, when it fails; else sets `output` (its stdout) in the
# caller's scope.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok\n${out}${err}")
  set(output "${out}" PARENT_SCOPE)
endfunction()
