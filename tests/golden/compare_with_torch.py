"""Recompute a Sinter model step with PyTorch and compare.

Usage: compare_with_torch.py <model> <dump-dir>...

Reads what golden_models wrote (parameters, the batch, the loss, gradients)
in each dump folder (one per mode: reference executor, eager, compiled),
runs the same model (benchmarks/torch_zoo.py) in PyTorch with those
parameters, forward, loss and backward in float32, and compares the loss and
every parameter gradient. A tensor passes when every element is within
RTOL * max|torch| (+ ATOL for all-zero tensors) of PyTorch's, and a NaN or
infinity where PyTorch's value is finite never passes. Exit status 1 if
anything fails.
"""
import os
import sys

import torch

# The PyTorch versions of the zoo models live with the benchmarks.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
from torch_zoo import LOSSES, load  # noqa: E402

RTOL = 1e-4  # relative to the tensor's largest magnitude, f32 on both sides
ATOL = 1e-7


def compare(name, ours, theirs):
    ours, theirs = ours.double().flatten(), theirs.double().flatten()
    if ours.shape != theirs.shape:
        print(f"TENSOR FAIL  {name:<40} {ours.numel()} elements, PyTorch's {theirs.numel()}")
        return False
    finite = torch.isfinite(theirs)
    scale = theirs[finite].abs().max().item() if finite.any() else 0.0
    allowed = RTOL * scale + ATOL
    diff = (ours - theirs).abs()
    # Element by element: NaN compares false, so a NaN result is out.
    within = torch.where(finite, diff <= allowed,
                         (ours == theirs) | (torch.isnan(ours) & torch.isnan(theirs)))
    ok = bool(within.all())
    worst = diff[finite & torch.isfinite(diff)].max().item() if (finite & torch.isfinite(diff)).any() else 0.0
    if ok:
        print(f"TENSOR OK    {name:<40} max diff {worst:.2e}  ({100 * worst / allowed:.1f}% of tolerance)")
    else:
        k = int((~within).nonzero()[0])
        print(f"TENSOR FAIL  {name:<40} element {k} is {ours[k].item():.9g}, PyTorch's "
              f"{theirs[k].item():.9g} (allowed {allowed:.3g}); "
              f"{int((~within).sum())} of {within.numel()} out")
    return ok


def check(model, directory):
    tensors = load(directory)
    params = {name: t.clone().requires_grad_() for (kind, name), t in tensors.items() if kind == "param"}
    inputs, targets = tensors[("input", "inputs")], tensors[("input", "targets")]
    loss = LOSSES[model](params, inputs, targets)
    loss.backward()
    ok = compare("loss", tensors[("output", "loss")].reshape(()), loss.detach())
    for name, p in params.items():
        ok = compare("grad " + name, tensors[("grad", name)], p.grad) and ok
    print(f"{model} ({os.path.basename(directory)}): "
          f"{'all tensors match' if ok else 'MISMATCH'} (loss {loss.item():.6f})")
    return ok


def main():
    model, directories = sys.argv[1], sys.argv[2:]
    if model not in LOSSES or not directories:
        sys.exit(f"usage: compare_with_torch.py <{'|'.join(sorted(LOSSES))}> <dump-dir>...")
    torch.set_num_threads(2)
    results = [check(model, d) for d in directories]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
