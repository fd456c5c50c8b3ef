#!/usr/bin/env bash
#===- tools/gpu_bundle.sh - what tools/gpu_check.sh carries to a GPU -------===#
# Prepares, on a machine with the compiler (no GPU needed), the folder that
# tools/gpu_check.sh runs on a machine with a GPU and only a driver: the
# MLIR-free binaries and libraries (libsinter_runtime and its Abseil and
# OpenSSL libraries, the C API consumer tests/aot/train_artifact.c, the
# device tests, sinter-info), and, per zoo model, a CUDA artifact
# (`sinter-compile --target cuda`: code for SINTER_GPU_ARCHS, by default a
# cubin for sm_90 and PTX for later GPUs, compute_90), its batches, and its
# reference losses: the same artifact trained here through the C API on the
# CUDA simulator (artifacts.tar.gz: a fresh optimizer's zero moments
# compress to nothing). Prints the folder's size,
# which must stay under what the GPU machine takes (64 MiB).
#
#   tools/gpu_bundle.sh [OUT]       OUT defaults to .gpu-bundle (ignored by git)
#
# SINTER_BUILD_DIR (build), SINTER_GPU_MODELS ("mlp lenet gpt-mini bert-mini"),
# SINTER_GPU_STEPS (5), SINTER_GPU_ARCHS (sm_90,compute_90).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SINTER_BUILD_DIR:-build}
OUT=${1:-.gpu-bundle}
MODELS=${SINTER_GPU_MODELS:-mlp lenet gpt-mini bert-mini}
STEPS=${SINTER_GPU_STEPS:-5}
ARCHS=${SINTER_GPU_ARCHS:-sm_90,compute_90}
for binary in tests/unit/aot_train_artifact tests/cuda/cuda_device_tests \
    tools/sinter-info/sinter-info tools/sinter-compile/sinter-compile; do
  if [[ ! -x $BUILD/$binary ]]; then
    echo "gpu_bundle: $BUILD/$binary is missing: build first (./tools/build.sh $BUILD)" >&2
    exit 1
  fi
done
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/artifacts"
trap 'rm -rf "$OUT/artifacts"' EXIT
cp "$BUILD/tests/unit/aot_train_artifact" "$BUILD/tests/cuda/cuda_device_tests" \
  "$BUILD/tools/sinter-info/sinter-info" "$OUT/bin/"
cp "$BUILD/runtime/libsinter_runtime.so" "$BUILD/runtime/libsinter_cuda_simulator.so" "$OUT/lib/"
# Every library they load (Sinter's own included: none needs MLIR) but the
# C and C++ runtimes (glibc, libstdc++, libgcc), which every machine has.
for file in "$OUT"/bin/* "$OUT"/lib/*.so; do
  ldd "$file" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r library; do
  [[ -e $OUT/lib/$(basename "$library") ]] && continue
  case $(basename "$library") in
  libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | ld-linux* | libpthread.so.* | \
    libdl.so.* | librt.so.*) ;;
  *) cp -L "$library" "$OUT/lib/" ;;
  esac
done
export LD_LIBRARY_PATH="$PWD/$OUT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for model in $MODELS; do
  case $model in
  resnet18) batch=2 ;;
  *) batch=4 ;;
  esac
  dir=$OUT/artifacts/$model.sinter
  "$BUILD/tools/sinter-compile/sinter-compile" --model "$model" --batch-size "$batch" \
    --length 16 --seed 7 --target cuda --arch "$ARCHS" -o "$dir" >/dev/null
  # The batches: every train_step input in its order, floats from a normal
  # distribution, integers (labels, token ids) 0 or 1: valid for every model.
  /usr/bin/python3 - "$dir" "$STEPS" "$OUT/artifacts/$model.batches" <<'EOF'
import json, sys
import numpy as np
manifest = json.load(open(sys.argv[1] + "/manifest.json"))
steps, out = int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(11)
with open(out, "wb") as f:
    for _ in range(steps):
        for value in manifest["functions"]["train_step"]["inputs"]:
            shape = value["shape"]
            if value["dtype"] == "f32":
                f.write(rng.standard_normal(shape, dtype=np.float32).tobytes())
            elif value["dtype"] in ("i64", "i32"):
                kind = np.int64 if value["dtype"] == "i64" else np.int32
                f.write(rng.integers(0, 2, shape, dtype=kind).tobytes())
            else:
                sys.exit(f"gpu_bundle: input {value['name']} is {value['dtype']}")
EOF
  SINTER_CUDA_SIMULATOR=1 "$OUT/bin/aot_train_artifact" "$dir" "$OUT/artifacts/$model.batches" \
    "$STEPS" "$OUT/artifacts/$model.reference" "$OUT/artifacts/$model.checkpoint"
  rm -f "$OUT/artifacts/$model.checkpoint"
  echo "gpu_bundle: $model: $STEPS steps on the CUDA simulator, reference losses written"
done
echo "$STEPS" >"$OUT/artifacts/steps"
echo "$MODELS" >"$OUT/artifacts/models"
tar -C "$OUT" -czf "$OUT/artifacts.tar.gz" artifacts
rm -rf "$OUT/artifacts"
size=$(du -sb "$OUT" | cut -f1)
echo "gpu_bundle: $OUT holds $(du -sh "$OUT" | cut -f1) ($size bytes); the GPU machine takes 64 MiB"
if ((size > 64 * 1024 * 1024)); then
  echo "gpu_bundle: over 64 MiB: give fewer models (SINTER_GPU_MODELS)" >&2
  exit 1
fi
