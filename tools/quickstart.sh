#!/usr/bin/env bash
#===- tools/quickstart.sh - install, build, and run the main job ---------===#
# The README's first command. On a fresh Debian 12 machine: installs the
# dependencies (Debian packages), builds Sinter, says which devices it sees,
# and runs the job examples/jobs/mlp-fashion-mnist.json with sinter-train:
# an MLP trained on Fashion-MNIST for one epoch, each step compiled into fused
# C++ kernels on the CPU, reporting the test accuracy (about 85%), compiled
# and eager throughput, and writing metrics, a checkpoint and a loss curve to
# runs/mlp-fashion-mnist. Extra arguments go to sinter-train (see its
# --help), e.g. --compiler off, --model lenet, --steps 200, --resume.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install_deps.sh
# The configuration tools/test.sh builds with (warnings are errors in
# Sinter's own code, which builds without any on Debian 12): the README's
# second command then finds this build/ up to date instead of rebuilding it.
./tools/build.sh build -DSINTER_WARNINGS_AS_ERRORS=ON

echo
./build/tools/sinter-info/sinter-info
echo
./build/tools/sinter-train/sinter-train --config examples/jobs/mlp-fashion-mnist.json "$@"
