#!/usr/bin/env python3
"""gpt-mini under a 256 MiB step budget: `sinter-bench --batch-size auto` must
choose at least twice the largest batch PyTorch's eager step fits in the same
budget (measured here with the installed PyTorch: torch.profiler's allocations
during a step after the first, as benchmarks/torch_baseline.py measures them;
16 with PyTorch 1.13 and 2.15, benchmarks/README.md), and the
steady step at that batch (after one warm-up step, the first, which also
allocates AdamW's moments) must run with its measured memory equal to the
plan and within the budget; one training step at that batch, compiled under
the budget, must give the reference executor's loss and gradients
(`--check-reference`: about two and a half minutes of reference executor).

    largest_batch.py SINTER_BENCH
"""
import json
import os
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
from torch_baseline import profiled_step_peak  # noqa: E402
from torch_zoo import LOSSES, load  # noqa: E402

BUDGET = 256 * 1024 * 1024
LENGTH = 128


def pytorch_step_bytes(params, batch):
    """The bytes PyTorch's eager gpt-mini step holds at its peak at `batch`:
    a step after the first (which creates AdamW's moments)."""
    params = {k: v.clone().requires_grad_() for k, v in params.items()}
    optimizer = torch.optim.AdamW(params.values(), lr=1e-3, weight_decay=1e-2)
    generator = torch.Generator().manual_seed(batch)
    vocab = params["wte.weight"].shape[0]
    ids = torch.randint(vocab, (batch, LENGTH), generator=generator)
    targets = torch.randint(vocab, (batch * LENGTH,), generator=generator)
    optimizer.zero_grad(set_to_none=True)
    LOSSES["gpt-mini"](params, ids, targets).backward()
    optimizer.step()
    return profiled_step_peak(LOSSES["gpt-mini"], params, optimizer, ids, targets)


def pytorch_largest_batch(bench):
    """The largest batch whose PyTorch step fits BUDGET (gpt-mini's weights
    as sinter-bench makes them)."""
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as weights:
        subprocess.run([bench, "--model", "gpt-mini", "--batch-size", "1", "--length", str(LENGTH),
                        "--dump-weights", weights, "--plan-only"],
                       check=True, capture_output=True, timeout=600)
        params = {name: t for (kind, name), t in load(weights).items() if kind == "param"}
    fits, over = 0, 1
    while pytorch_step_bytes(params, over) <= BUDGET:  # doubling, then bisection
        fits, over = over, 2 * over
    while over - fits > 1:
        middle = (fits + over) // 2
        if pytorch_step_bytes(params, middle) <= BUDGET:
            fits = middle
        else:
            over = middle
    print(f"PyTorch {torch.__version__}: batch {fits} fits {BUDGET >> 20} MiB "
          f"({pytorch_step_bytes(params, fits) / 2**20:.1f} MiB), {over} needs "
          f"{pytorch_step_bytes(params, over) / 2**20:.1f} MiB")
    return fits


PYTORCH_LARGEST = pytorch_largest_batch(sys.argv[1])
if PYTORCH_LARGEST < 1:
    sys.exit("PyTorch's step does not fit the budget at batch 1: nothing to compare")

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
