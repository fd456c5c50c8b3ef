#!/usr/bin/env bash
#===- tools/build.sh - configure and build Sinter (after install_deps.sh) --===#
# Usage: tools/build.sh [build-dir] [extra cmake args...]. Default: ./build.
# Uses Ninja, ccache when present (shared between clones), and at most
# SINTER_JOBS (default: cores) parallel jobs. SINTER_BUILD_TARGETS (names
# separated by spaces) builds only those targets and what they need.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
shift || true
JOBS=${SINTER_JOBS:-$(nproc)}
# ccache: the same sources in another clone (another folder) hit the same
# cache entries; paths inside the tree are compiled relative to it.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
targets=()
for target in ${SINTER_BUILD_TARGETS:-}; do
  targets+=(--target "$target")
done
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
