#!/usr/bin/env python3
"""JAX's side of Sinter's benchmarks: the zoo models of benchmarks/jax_zoo.py,
the weights and batch `sinter-bench --dump-weights DIR` wrote, and AdamW
(lr 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 1e-2, as torch.optim.AdamW),
the whole training step under one jax.jit with parameters and optimizer state
donated (XLA's CPU backend).

Usage:
  jax_baseline.py --model gpt-mini --batch-size 8 --length 128 --steps 10 \\
      --threads 2 --weights DIR [--json]

JAX is optional (`pip install jax`); benchmarks/compare runs this script with a
Python that has it and reports jax.jit as skipped otherwise. Peak memory is the
process's peak resident-set growth, a bound as for PyTorch.
"""
import json
import os
import statistics
import sys
import time

from baseline_common import parse_args, peak_rss_bytes


def main():
    args = parse_args(__doc__)
    # XLA's CPU backend runs its thread pool over every core unless told.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen=true"
                               f" intra_op_parallelism_threads={args.threads}")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print(json.dumps({"model": args.model, "mode": "jax.jit", "skipped": "JAX is not installed"})
              if args.json else "jax.jit        skipped: JAX is not installed")
        return
    from jax_zoo import LOSSES, load
    if args.model not in LOSSES:
        sys.exit(f"jax_baseline.py: --model must be one of {', '.join(sorted(LOSSES))}")

    arrays = load(args.weights)
    params = {name: jnp.asarray(a) for (kind, name), a in arrays.items() if kind == "param"}
    inputs = jnp.asarray(arrays[("input", "inputs")])
    targets = jnp.asarray(arrays[("input", "targets")])
    if inputs.shape[0] != args.batch_size:
        sys.exit(f"--weights holds a batch of {inputs.shape[0]}, not --batch-size {args.batch_size}")
    loss_fn = LOSSES[args.model]
    lr, beta1, beta2, eps, decay = 1e-3, 0.9, 0.999, 1e-8, 1e-2

    def train_step(params, m, v, step, inputs, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
        step = step + 1
        correction1 = 1 - beta1 ** step
        correction2 = 1 - beta2 ** step
        new_params, new_m, new_v = {}, {}, {}
        for k in params:
            p = params[k] * (1 - lr * decay)
            new_m[k] = beta1 * m[k] + (1 - beta1) * grads[k]
            new_v[k] = beta2 * v[k] + (1 - beta2) * grads[k] ** 2
            denom = jnp.sqrt(new_v[k]) / jnp.sqrt(correction2) + eps
            new_params[k] = p - (lr / correction1) * new_m[k] / denom
        return new_params, new_m, new_v, step, loss

    step_fn = jax.jit(train_step, donate_argnums=(0, 1, 2))
    m = {k: jnp.zeros_like(p) for k, p in params.items()}
    v = {k: jnp.zeros_like(p) for k, p in params.items()}
    step = jnp.asarray(0, dtype=jnp.int32)
    rss_start = peak_rss_bytes()
    times, losses = [], []
    compile_s = 0.0
    for i in range(args.warmup + args.steps):
        start = time.perf_counter()
        params, m, v, step, loss = step_fn(params, m, v, step, inputs, targets)
        value = float(loss)
        elapsed = time.perf_counter() - start
        if i == 0:
            compile_s = elapsed
        if i >= args.warmup:
            times.append(elapsed * 1000)
        losses.append(value)
    median = statistics.median(times)
    record = {"model": args.model, "mode": "jax.jit", "batch_size": args.batch_size,
              "length": args.length, "threads": args.threads, "steps": args.steps,
              "step_ms_median": round(median, 3),
              "samples_per_s": round(1000 * args.batch_size / median, 2),
              "peak_bytes": peak_rss_bytes() - rss_start, "first_step_s": round(compile_s, 3),
              "first_loss": losses[0], "last_loss": losses[-1], "jax": jax.__version__}
    if args.json:
        print(json.dumps(record))
    else:
        print(f"jax.jit        {args.model} batch {args.batch_size}, threads {args.threads}: "
              f"median step {median:.2f} ms, {record['samples_per_s']:.1f} samples/s, "
              f"loss {losses[0]:.4f} -> {losses[-1]:.4f} (first step, compilation included, "
              f"{compile_s:.1f} s)")


if __name__ == "__main__":
    main()
