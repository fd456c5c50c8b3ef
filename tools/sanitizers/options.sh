# Sanitizer options of tools/test.sh's sanitized runs (sourced). Every report
# stops the process with a failing status, so the test that caused it fails.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1:check_initialization_order=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# use_tls=0: GCC 12's LeakSanitizer crashes ("Tracer caught signal 11") when it
# scans the dynamic thread-local storage of libraries opened with dlopen (the
# kernel libraries, oneDNN, OpenBLAS); pointers kept only in thread-local
# storage then look leaked, which lsan.supp lists.
export LSAN_OPTIONS=${LSAN_OPTIONS:-use_tls=0:suppressions=$here/lsan.supp:print_suppressions=0}
export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$here/tsan.supp:halt_on_error=1:second_deadlock_stack=1}
# ThreadSanitizer cannot see libgomp's barriers (Debian's libgomp is not built
# with it), so every parallel loop of a kernel would be reported: in the TSan
# run kernels keep to one thread each, and what is checked is Sinter's own
# threads and what they share.
if [[ ${SINTER_SANITIZE:-} == *thread* ]]; then
  export OMP_NUM_THREADS=1
fi
