"""Recompute a Sinter model step with PyTorch and compare.

Usage: compare_with_torch.py <model> <dump-dir>...

Reads what golden_models wrote (parameters, the batch, the loss, gradients)
in each dump folder (one per mode: reference executor, eager, compiled),
runs the same model (benchmarks/torch_zoo.py) in PyTorch with those
parameters, forward, loss and backward in float32, and compares the loss and
every parameter gradient by closeness.py's rules (TOLERANCE: each element
within 5e-5 of the tensor's largest finite magnitude plus 1e-4 of its own,
and the difference's norm within 5e-5 of the tensor's; a NaN or infinity
where PyTorch's value is finite never passes). Measured on 2 cores against
Debian's PyTorch, the largest differences are resnet18's (1.4e-5 of the
largest element, 8e-6 in norm: its batch norms). Exit status 1 if anything
fails.
"""
import os
import sys

import torch

from closeness import Tolerance, compare as closeness
# The PyTorch versions of the zoo models live with the benchmarks.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
from torch_zoo import LOSSES, load  # noqa: E402

# f32 on both sides, summed in different orders.
TOLERANCE = Tolerance(of_largest=5e-5, of_element=1e-4, absolute=1e-7, of_norm=5e-5)


def compare(name, ours, theirs):
    result = closeness(name, ours, theirs, TOLERANCE)
    print(result.line)
    return result.ok


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
