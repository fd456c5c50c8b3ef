#!/usr/bin/env bash
#===- tools/quickstart.sh - install, build, and run the main job ---------===#
# The README's first command. On a fresh Debian 12 machine: installs the
# dependencies (Debian packages), builds Sinter, says which devices it sees,
# and trains an MLP on Fashion-MNIST for one epoch with Sinter's C++ API on
# the CPU (reference executor), reporting the test accuracy (about 85%, in
# about a minute on 2 cores). Extra arguments go to sinter-train-example
# (see its --help), e.g. --model lenet --steps 200.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install_deps.sh
./tools/build.sh build

echo
./build/tools/sinter-info/sinter-info
echo
./build/tools/sinter-train-example/sinter-train-example --model mlp --epochs 1 "$@"
