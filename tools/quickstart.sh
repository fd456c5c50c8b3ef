#!/usr/bin/env bash
#===- tools/quickstart.sh - install, build, and run the main job ---------===#
# The README's first command. On a fresh Debian 12 machine: installs the
# dependencies (Debian packages), builds Sinter, says which devices it sees,
# and compiles the demo training step (an MLP's forward, loss, backward and
# SGD update in the sinter dialect) through canonicalization and CSE.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install_deps.sh
./tools/build.sh build

echo
./build/tools/sinter-info/sinter-info
echo
DEMO=tests/lit/examples/mlp_train_step.mlir
OPT=./build/tools/sinter-opt/sinter-opt
"$OPT" "$DEMO" --canonicalize --cse
before=$("$OPT" "$DEMO" | grep -c ' = sinter\.')
after=$("$OPT" "$DEMO" --canonicalize --cse | grep -c ' = sinter\.')
echo
echo "demo training step ($DEMO): $before sinter ops recorded, $after after canonicalize + cse"
