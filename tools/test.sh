#!/usr/bin/env bash
#===- tools/test.sh - build Sinter and run every test ---------------------===#
# The README's second command: installs the dependencies if missing, builds,
# and runs the whole suite (lit, unit, install) with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install_deps.sh
./tools/build.sh build -DSINTER_WARNINGS_AS_ERRORS=ON
cd build
ctest --output-on-failure -j "${SINTER_JOBS:-$(nproc)}" -LE long
