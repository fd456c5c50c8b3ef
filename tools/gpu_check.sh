#!/usr/bin/env bash
#===- tools/gpu_check.sh - build and test Sinter on a machine with a GPU ---===#
# One command for a machine with an NVIDIA GPU: builds Sinter (CUDA
# architectures from CMAKE_CUDA_ARCHITECTURES, default 90), checks that a GPU
# is usable, and runs the whole test suite with the GPU required
# (SINTER_EXPECT_CUDA=1 makes tests that would otherwise accept "no device"
# insist on one). Set SINTER_SKIP_DEPS=1 when the dependencies are already
# installed and no package mirror is reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${SINTER_GPU_BUILD_DIR:-build-gpu}
if [[ "${SINTER_SKIP_DEPS:-0}" != 1 ]]; then
  ./tools/install_deps.sh
fi
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
fi
./tools/build.sh "$BUILD_DIR" -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}"
"./$BUILD_DIR/tools/sinter-info/sinter-info" --require-cuda
SINTER_EXPECT_CUDA=1 ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${SINTER_JOBS:-$(nproc)}"
