#!/usr/bin/env bash
#===- tools/gpu_check.sh - Sinter's CUDA path on a machine with a GPU ------===#
# Runs what tools/gpu_bundle.sh prepared (carried to the GPU machine, which
# needs only the NVIDIA driver, NVRTC and cuBLAS: no compiler, no MLIR):
#   1. the device: nvidia-smi, and sinter-info --require-cuda;
#   2. the device tests (cuda_device_tests, SINTER_EXPECT_CUDA=1): Philox
#      and the f16/bf16 conversions bitwise against the host, the driver's device (copies, fills, its
#      memory cache, cuBLAS products in every layout against the host, a
#      Program of a kernel, a fill and a product);
#   3. every zoo model's CUDA artifact (cubins for the GPU's architecture)
#      trained through the C API for the bundle's steps, its losses against
#      the reference losses of the same artifact on the CUDA simulator, and
#      the time of a step;
#   4. PyTorch eager and torch.compile on gpt-mini's configuration, from the
#      artifact's weights and first batch (benchmarks/torch_baseline.py
#      --device cuda), where a PyTorch with CUDA is ($SINTER_PYTHON, python3);
#   5. compute-sanitizer memcheck and racecheck on one step of mlp, where
#      compute-sanitizer is installed;
# and writes $SINTER_GPU_CHECK_OUT (gpu-check/) check.json and table.md.
# Exit status 0 when everything it ran passed.
#
#   tools/gpu_check.sh [BUNDLE]    BUNDLE defaults to .gpu-bundle
#
# With SINTER_CUDA_SIMULATOR=1 the CUDA simulator stands for the GPU (on the
# build machine): the device tests and compute-sanitizer are skipped, and
# the artifacts run on the simulator's build of their kernels (PyTorch is
# skipped too).
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${1:-.gpu-bundle}
OUT=${SINTER_GPU_CHECK_OUT:-gpu-check}
TOLERANCE=${SINTER_GPU_TOLERANCE:-2e-3}
if [[ ! -x $BUNDLE/bin/aot_train_artifact || ! -f $BUNDLE/artifacts.tar.gz ]]; then
  echo "gpu_check: no bundle at $BUNDLE: run tools/gpu_bundle.sh where Sinter is built, and" \
    "carry the folder" >&2
  exit 2
fi
BUNDLE=$(cd "$BUNDLE" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$BUNDLE/artifacts.tar.gz" -C "$work"
artifacts=$work/artifacts
export LD_LIBRARY_PATH="$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SINTER_SOURCE_DIR=$PWD
simulated=0
[[ ${SINTER_CUDA_SIMULATOR:-0} != 0 ]] && simulated=1
status=0
: >"$OUT/check.jsonl"
record() { echo "$1" >>"$OUT/check.jsonl"; }

echo "== device"
if ((simulated)); then
  echo "the CUDA simulator stands for the GPU (SINTER_CUDA_SIMULATOR=$SINTER_CUDA_SIMULATOR)"
  record '{"check": "device", "device": "CUDA simulator"}'
else
  command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  if ! "$BUNDLE/bin/sinter-info" --require-cuda; then
    echo "gpu_check: no usable GPU (above)" >&2
    exit 1
  fi
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  record "{\"check\": \"device\", \"device\": \"${name:-unknown}\"}"
fi

echo "== device tests"
if ((simulated)); then
  echo "skipped: they need a GPU"
  record '{"check": "device_tests", "result": "skipped (the simulator)"}'
elif SINTER_EXPECT_CUDA=1 "$BUNDLE/bin/cuda_device_tests"; then
  record '{"check": "device_tests", "result": "passed"}'
else
  record '{"check": "device_tests", "result": "FAILED"}'
  status=1
fi

steps=$(cat "$artifacts/steps")
for model in $(cat "$artifacts/models"); do
  echo "== $model: $steps steps through the C API"
  dir=$artifacts/$model.sinter
  times=()
  ok=1
  for count in 1 "$steps"; do
    start=$(date +%s.%N)
    if ! "$BUNDLE/bin/aot_train_artifact" "$dir" "$artifacts/$model.batches" "$count" \
      "$work/$model.$count.losses" "$work/$model.checkpoint"; then
      ok=0
      break
    fi
    times+=("$(echo "$(date +%s.%N) - $start" | bc)")
  done
  if ((!ok)); then
    record "{\"check\": \"train\", \"model\": \"$model\", \"result\": \"FAILED to run\"}"
    status=1
    continue
  fi
  # Losses against the simulator's: within TOLERANCE of the largest
  # (another summation order, FMA on the GPU); the time of a step is the
  # difference of the two runs over the steps between them.
  line=$(/usr/bin/python3 - "$work/$model.$steps.losses" "$artifacts/$model.reference" "$steps" \
    "$TOLERANCE" "$model" "${times[0]}" "${times[1]}" <<'EOF'
import json, struct, sys
got, want, steps, tol, model, t1, tn = sys.argv[1:8]
steps, tol = int(steps), float(tol)
read = lambda path: struct.unpack(f"{steps}f", open(path, "rb").read()[: 4 * steps])
got, want = read(got), read(want)
scale = max(abs(w) for w in want)
worst = max(abs(g - w) for g, w in zip(got, want)) / scale
step_ms = (float(tn) - float(t1)) / max(steps - 1, 1) * 1e3
print(json.dumps({"check": "train", "model": model, "steps": steps,
                  "losses": [round(g, 6) for g in got], "reference": [round(w, 6) for w in want],
                  "worst_of_largest": worst, "tolerance": tol,
                  "result": "passed" if worst <= tol else "FAILED", "step_ms": round(step_ms, 3)}))
EOF
  )
  echo "$line"
  record "$line"
  [[ $line == *'"result": "passed"'* ]] || status=1
done

echo "== PyTorch on gpt-mini's configuration"
# The artifact's weights and first batch as benchmarks/torch_baseline.py
# reads them (tools/gpu_torch_weights.py), then PyTorch eager and
# torch.compile on the GPU; its first loss is the artifact's first loss.
python=${SINTER_PYTHON:-python3}
if ((simulated)); then
  echo "skipped: the simulator"
  record '{"check": "pytorch", "result": "skipped (the simulator)"}'
elif [[ ! -d $artifacts/gpt-mini.sinter ]] ||
  ! "$python" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "skipped: no gpt-mini artifact, or no PyTorch with CUDA ($python)"
  record '{"check": "pytorch", "result": "skipped (no PyTorch with CUDA, or no gpt-mini)"}'
else
  read -r batch length < <(/usr/bin/python3 tools/gpu_torch_weights.py \
    "$artifacts/gpt-mini.sinter" "$artifacts/gpt-mini.batches" "$work/torch-weights")
  if "$python" benchmarks/torch_baseline.py --model gpt-mini --batch-size "$batch" \
    --length "$length" --steps 20 --warmup 3 --device cuda --weights "$work/torch-weights" \
    --json >"$work/torch.jsonl"; then
    first=$(/usr/bin/python3 -c 'import struct,sys; print(struct.unpack("f", open(sys.argv[1], "rb").read(4))[0])' \
      "$artifacts/gpt-mini.reference")
    while read -r line; do
      record "{\"check\": \"pytorch\", \"result\": \"ran\", \"sinter_first_loss\": $first, \"run\": $line}"
    done <"$work/torch.jsonl"
  else
    record '{"check": "pytorch", "result": "FAILED"}'
    status=1
  fi
fi

echo "== compute-sanitizer"
if ((simulated)) || ! command -v compute-sanitizer >/dev/null; then
  why="the simulator"
  ((simulated)) || why="compute-sanitizer is not installed"
  echo "skipped: $why"
  record "{\"check\": \"compute_sanitizer\", \"result\": \"skipped ($why)\"}"
else
  for tool in memcheck racecheck; do
    if compute-sanitizer --tool "$tool" --error-exitcode 3 "$BUNDLE/bin/aot_train_artifact" \
      "$artifacts/mlp.sinter" "$artifacts/mlp.batches" 1 "$work/cs.losses" "$work/cs.ckpt"; then
      record "{\"check\": \"compute_sanitizer\", \"tool\": \"$tool\", \"result\": \"passed\"}"
    else
      record "{\"check\": \"compute_sanitizer\", \"tool\": \"$tool\", \"result\": \"FAILED\"}"
      status=1
    fi
  done
fi

/usr/bin/python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
rows = [json.loads(line) for line in open(out + "/check.jsonl")]
json.dump(rows, open(out + "/check.json", "w"), indent=1)
lines = ["| check | model / tool | result | detail |", "|---|---|---|---|"]
for r in rows:
    if r["check"] == "device":
        lines.append(f"| device | | {r['device']} | |")
    elif r["check"] == "train":
        detail = (f"{r['steps']} steps, losses {r['losses'][0]:.4f} -> {r['losses'][-1]:.4f}, "
                  f"worst {r['worst_of_largest']:.2e} of the largest (tolerance {r['tolerance']}), "
                  f"{r['step_ms']:.2f} ms a step" if "losses" in r else "")
        lines.append(f"| train | {r['model']} | {r['result']} | {detail} |")
    elif r["check"] == "pytorch" and "run" in r:
        run = r["run"]
        detail = (f"skipped: {run['skipped']}" if "skipped" in run else
                  f"batch {run['batch_size']} x {run['length']}, {run['step_ms_median']:.2f} ms a "
                  f"step (median of {run['steps']}), first loss {run['first_loss']:.4f} (Sinter's "
                  f"{r['sinter_first_loss']:.4f}), torch {run['torch']}")
        lines.append(f"| pytorch | gpt-mini, {run['mode']} | {r['result']} | {detail} |")
    else:
        lines.append(f"| {r['check']} | {r.get('tool', '')} | {r['result']} | |")
open(out + "/table.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
echo "gpu_check: $OUT/check.json, $OUT/table.md; exit status $status"
exit "$status"
