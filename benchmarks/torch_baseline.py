#!/usr/bin/python3
"""PyTorch's side of Sinter's benchmarks: the same models, configurations,
weights and optimizer (AdamW, lr 1e-3, weight decay 1e-2) as sinter-bench.

Usage:
  torch_baseline.py --model gpt-mini --batch-size 8 --length 128 --steps 10 \\
      --threads 2 --weights DIR [--json]

--weights reads what `sinter-bench --dump-weights DIR` wrote (parameters and
the batch): both frameworks start from the same model. Reports PyTorch eager
and, where installed, torch.compile (PyTorch 2.x, Inductor's CPU backend); a
mode that is not available is reported as skipped, with the reason. `--device cuda` runs
both on the GPU (tools/gpu_check.sh), where peak memory is the caching allocator's own
peak. On the CPU, peak memory is the process's peak resident set growth during
the run (parameters, optimizer state and the steps' tensors; PyTorch's CPU
allocator has no counter of its own), so it is only a bound: memory the
process had already reached before is not counted again.
"""
import json
import statistics
import sys
import time

import torch

from baseline_common import parse_args, peak_rss_bytes
from torch_zoo import LOSSES, load


def profiled_step_peak(fn, params, optimizer, inputs, targets):
    """The most bytes one more training step holds at once beyond what existed
    when it began (after zero_grad): torch.profiler's allocation events
    (profile_memory), summed in time order. Sinter's `planned_peak_bytes` is
    the same quantity for its step."""
    from torch.profiler import ProfilerActivity, profile
    optimizer.zero_grad(set_to_none=True)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        loss = fn(params, inputs, targets)
        loss.backward()
        optimizer.step()
        loss.item()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    held = peak = 0
    # PyTorch 2.x's events have start_ns; 1.13's start_us.
    start = (lambda e: e.start_ns()) if events and hasattr(events[0], "start_ns") else (
        lambda e: e.start_us())
    for event in sorted(events, key=start):
        held += event.nbytes()
        peak = max(peak, held)
    return peak


def gpu_step_peak(fn, params, optimizer, inputs, targets):
    """On a GPU: the most bytes one more training step holds beyond what
    existed when it began, from the caching allocator's own counters."""
    optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss = fn(params, inputs, targets)
    loss.backward()
    optimizer.step()
    loss.item()
    return torch.cuda.max_memory_allocated() - before


def run(mode, loss_fn, params, inputs, targets, steps, warmup):
    gpu = inputs.is_cuda
    if gpu:
        torch.cuda.reset_peak_memory_stats()
    rss_start = peak_rss_bytes()
    params = {k: v.clone().requires_grad_() for k, v in params.items()}
    optimizer = torch.optim.AdamW(params.values(), lr=1e-3, weight_decay=1e-2)
    fn = loss_fn
    if mode == "torch.compile":
        fn = torch.compile(loss_fn)
    times, losses = [], []
    for step in range(warmup + steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = fn(params, inputs, targets)
        loss.backward()
        optimizer.step()
        value = loss.item()
        if step >= warmup:
            times.append((time.perf_counter() - start) * 1000)
        losses.append(value)
    if gpu:  # loss.item() above waited for the GPU at every step
        peak = torch.cuda.max_memory_allocated()
        return times, losses, peak, gpu_step_peak(fn, params, optimizer, inputs, targets)
    step_peak = profiled_step_peak(fn, params, optimizer, inputs, targets)
    return times, losses, peak_rss_bytes() - rss_start, step_peak


def main():
    args = parse_args(__doc__, sorted(LOSSES), devices=("cpu", "cuda"))
    # Debian's PyTorch uses one thread unless told.
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_baseline: --device cuda but this PyTorch sees no GPU "
                 f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
    tensors = {key: t.to(args.device) for key, t in load(args.weights).items()}
    params = {name: t for (kind, name), t in tensors.items() if kind == "param"}
    inputs, targets = tensors[("input", "inputs")], tensors[("input", "targets")]
    if inputs.shape[0] != args.batch_size:
        sys.exit(f"--weights holds a batch of {inputs.shape[0]}, not --batch-size {args.batch_size}")
    loss_fn = LOSSES[args.model]
    modes = ["eager"]
    compile_ok = hasattr(torch, "compile")
    modes.append("torch.compile" if compile_ok else None)
    for mode in modes:
        if mode is None:
            record = {"model": args.model, "mode": "torch.compile", "skipped":
                      f"PyTorch {torch.__version__} has no torch.compile (it came in 2.0)"}
        else:
            try:
                times, losses, peak, step_peak = run(mode, loss_fn, params, inputs, targets,
                                                     args.steps, args.warmup)
            except Exception as e:  # an optional compiler that fails here is reported, not fatal
                if mode == "eager":
                    raise
                record = {"model": args.model, "mode": mode, "skipped": f"failed: {e}"}
            else:
                median = statistics.median(times)
                record = {"model": args.model, "mode": "torch " + mode, "batch_size": args.batch_size,
                          "length": args.length, "threads": args.threads, "steps": args.steps,
                          "device": args.device,
                          "step_ms_median": round(median, 3),
                          "samples_per_s": round(1000 * args.batch_size / median, 2),
                          "peak_bytes": peak, "step_peak_bytes": step_peak,
                          "first_loss": losses[0], "last_loss": losses[-1],
                          "torch": torch.__version__}
        if args.json:
            print(json.dumps(record))
        elif "skipped" in record:
            print(f"{record['mode']:<14} skipped: {record['skipped']}")
        else:
            print(f"{record['mode']:<14} {args.model} batch {args.batch_size}, threads {args.threads}: "
                  f"median step {record['step_ms_median']:.2f} ms, {record['samples_per_s']:.1f} "
                  f"samples/s, loss {record['first_loss']:.4f} -> {record['last_loss']:.4f}")


if __name__ == "__main__":
    main()
