#!/usr/bin/env bash
#===- tools/test.sh - build Sinter and run every test ---------------------===#
# The README's second command: installs the dependencies if missing, builds,
# and runs the whole suite (lit, unit, install) with ctest. Arguments go to
# ctest (-L unit, -R Cache, ...).
#
# SINTER_SANITIZE=address,undefined (or thread) builds everything with those
# sanitizers into build-sanitize-<names>/, the kernels that Sinter compiles at
# run time included, and runs the suite there: the first report fails its
# test. Options and the few reports that are not Sinter's are in
# tools/sanitizers/ (each with its reason).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install_deps.sh
dir=build
# The configuration tools/quickstart.sh builds with: one build/ for both.
flags=(-DSINTER_WARNINGS_AS_ERRORS=ON)
if [[ -n ${SINTER_SANITIZE:-} ]]; then
  dir=build-sanitize-${SINTER_SANITIZE//,/-}
  # Without -Werror: GCC's middle-end warnings (-Wrestrict, -Warray-bounds,
  # -Wstringop-overflow) misfire on instrumented code; the plain build keeps
  # Sinter's code warning-free.
  flags=(-DSINTER_SANITIZE="$SINTER_SANITIZE" -DSINTER_WARNINGS_AS_ERRORS=OFF)
  source tools/sanitizers/options.sh
fi
./tools/build.sh "$dir" "${flags[@]}"
cd "$dir"
ctest --output-on-failure -j "${SINTER_JOBS:-$(nproc)}" -LE long "$@"
