#===- cmake/SinterWarnings.cmake - warning flags for Sinter's own code ----===#
# Applied per target (sinter_set_warnings), never globally, so that headers of
# dependencies included as SYSTEM stay quiet and flags do not leak.
function(sinter_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)
  if(SINTER_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
