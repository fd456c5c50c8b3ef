#!/usr/bin/env python3
"""gpt-mini under a 256 MiB step budget: `sinter-bench --batch-size auto` must
choose at least twice the largest batch PyTorch's eager step fits in the same
budget (16, measured with torch.profiler: benchmarks/README.md), and the
steady step at that batch (after one warm-up step, the first, which also
allocates AdamW's moments) must run with its measured memory equal to the
plan and within the budget; one training step at that batch, compiled under
the budget, must give the reference executor's loss and gradients
(`--check-reference`: about two and a half minutes of reference executor).

    largest_batch.py SINTER_BENCH
"""
import json
import subprocess
import sys

BUDGET = 256 * 1024 * 1024
PYTORCH_LARGEST = 16

result = subprocess.run(
    [sys.argv[1], "--model", "gpt-mini", "--batch-size", "auto", "--memory-budget", "256MiB",
     "--steps", "1", "--warmup", "1", "--mode", "compiled", "--threads", "2", "--json",
     "--check-reference"],
    capture_output=True, text=True, timeout=1200)
print(result.stdout + result.stderr)
if result.returncode != 0:
    sys.exit(f"sinter-bench failed with status {result.returncode}")
rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
compiled = [r for r in rows if r["mode"] == "compiled"]
if len(compiled) != 1:
    sys.exit(f"expected one compiled row, got {rows}")
row = compiled[0]
failures = []
if row["chosen_batch_size"] < 2 * PYTORCH_LARGEST:
    failures.append(f"chose batch {row['chosen_batch_size']}, below 2 x {PYTORCH_LARGEST}")
if row["measured_peak_bytes"] != row["planned_peak_bytes"]:
    failures.append(f"measured {row['measured_peak_bytes']} != planned {row['planned_peak_bytes']}")
if row["planned_peak_bytes"] > BUDGET:
    failures.append(f"planned {row['planned_peak_bytes']} bytes, over the budget {BUDGET}")
checks = [line for line in result.stdout.splitlines() if line.startswith("reference check, ")]
expected = f"reference check, gpt-mini batch {row['chosen_batch_size']}: "
if len(checks) != 1 or not checks[0].startswith(expected) or " gradients agree " not in checks[0]:
    failures.append(f"the step did not match the reference executor: {checks}")
for failure in failures:
    print("FAILED:", failure)
sys.exit(1 if failures else 0)
