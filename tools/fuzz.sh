#!/usr/bin/env bash
#===- tools/fuzz.sh - build every fuzzer and run each on its corpus --------===#
# Usage: tools/fuzz.sh [SECONDS] [READER...]. Installs clang 19 and libFuzzer
# (Debian's clang-19, libclang-rt-19-dev) if missing, builds each reader's
# fuzzer (tests/fuzz/fuzz_<reader>.cpp) with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz/, and runs each for SECONDS
# (default 60) on its seed corpus (tests/fuzz/corpus/<reader>/, plus what it
# found before, kept in build-fuzz/corpus/<reader>/). At the first crash (a
# sanitizer report, an abort, an exception no check names, a leak, more
# than 2 GiB of memory or 10 s on one input) it prints the input and exits 1:
# copy the input into tests/fuzz/regressions/<reader>/ and the test suite
# replays it (fuzz.replay.<reader>). The same command runs them for hours.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
READERS=("$@")
if ((${#READERS[@]} == 0)); then
  READERS=(job safetensors idx tokens tokenizer mlir program manifest store checkpoint)
fi
./tools/install_deps.sh clang-19 libclang-rt-19-dev
# ccache: the same sources in another clone hit the same cache entries.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DSINTER_FUZZ=ON -DSINTER_BUILD_TESTS=OFF -DSINTER_ENABLE_CUDA=OFF >/dev/null
cmake --build build-fuzz -j "${SINTER_JOBS:-$(nproc)}" \
  --target "${READERS[@]/#/fuzz_}"
mkdir -p build-fuzz/crashes
status=0
for reader in "${READERS[@]}"; do
  work=build-fuzz/corpus/$reader
  mkdir -p "$work"
  seeds=(tests/fuzz/corpus/"$reader")
  [[ -d tests/fuzz/regressions/$reader ]] && seeds+=(tests/fuzz/regressions/"$reader")
  log=build-fuzz/fuzz_$reader.log
  # libMLIR is not instrumented, but the LLVM headers inlined into the
  # instrumented dialect poison the bump allocators' free space, which
  # libMLIR's own copies then hand out: ignore user poisoning there only.
  options=${ASAN_OPTIONS:-}
  [[ $reader == mlir ]] && options=allow_user_poisoning=0${options:+:$options}
  echo "fuzz.sh: fuzz_$reader for ${SECONDS_EACH} s"
  if ! ASAN_OPTIONS=$options build-fuzz/tests/fuzz/fuzz_"$reader" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 -artifact_prefix=build-fuzz/crashes/"$reader"- \
      "$work" "${seeds[@]}" >"$log" 2>&1; then
    status=1
    tail -n 60 "$log"
    for input in build-fuzz/crashes/"$reader"-*; do
      [[ -e $input ]] || continue
      echo "fuzz.sh: fuzz_$reader failed on $input ($(stat -c %s "$input") bytes):"
      head -c 512 "$input" | od -A d -c | head -n 24
      echo "fuzz.sh: copy it into tests/fuzz/regressions/$reader/ once fixed"
    done
    break
  fi
  grep -E "stat::number_of_executed_units|cov: " "$log" | tail -n 2 | sed "s/^/  /"
done
exit "$status"
