#!/usr/bin/env bash
#===- tools/install_deps.sh - install Sinter's build dependencies ----------===#
#
# Every dependency comes from Debian 12 packages (plus the CUDA toolkit, which is
# expected at /usr/local/cuda and is optional). Idempotent: when every package is
# already installed it returns without touching apt.
set -euo pipefail

PACKAGES=(
  # Build tools.
  cmake ninja-build ccache g++ pkg-config python3 git
  # The two-machine launcher tests make network namespaces and a veth pair
  # (ip); the data-parallel benchmark limits its bandwidth (tc).
  iproute2
  # LLVM/MLIR 19: the dialect, passes, sinter-opt, lit and FileCheck.
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev
  # Abseil, tests and benchmarks.
  libabsl-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
  # Collectives on CPU (Gloo) and CPU matmul/convolution (oneDNN; its CMake
  # config also needs the OpenCL ICD loader headers).
  libgloo-dev libdnnl-dev ocl-icd-opencl-dev
  # Matrix products whose left operand is transposed (weight gradients): OpenBLAS,
  # its OpenMP build, so that it shares the kernels' OpenMP threads.
  libopenblas-openmp-dev
  # Reading gzip-compressed datasets.
  zlib1g-dev
  # The CUDA simulator's fibers (Boost.Context).
  libboost-context-dev
  # sinter-train: job files and safetensors headers (JSON), its command line,
  # and the loss curve it draws (PNG).
  nlohmann-json3-dev libssl-dev libcli11-dev gnuplot-nox
  # GPT-2's tokenizer: its pre-tokenizer pattern needs Unicode properties
  # (PCRE2), and its golden test runs GPT-2's own code (Python's regex).
  libpcre2-dev python3-regex
  # The outside oracle of the golden tests: PyTorch (CPU) for the system python3.
  python3-torch python3-numpy
  # Real data for the training example and tests (IDX files under
  # /usr/share/datasets/fashion-mnist).
  dataset-fashion-mnist
)
# More, for one task: tools/install_deps.sh clang-19 libclang-rt-19-dev (fuzz.sh).
PACKAGES+=("$@")

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#PACKAGES[@]} packages already installed"
else
  echo "install_deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install_deps: CUDA toolkit found at /usr/local/cuda"
else
  echo "install_deps: no CUDA toolkit at /usr/local/cuda; building the CPU backend only"
fi
