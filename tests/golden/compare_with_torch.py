"""Recompute a Sinter model step with PyTorch and compare.

Usage: compare_with_torch.py <gpt-mini|bert-mini> <dump-dir>

Reads what golden_models wrote (parameters, inputs, loss, gradients), builds
the same architecture in PyTorch with those parameters, runs forward, loss
and backward in float32, and compares the loss and every parameter gradient.
A tensor passes when max|sinter - torch| <= RTOL * max|torch| (+ ATOL for
all-zero tensors). Exit status 1 if anything fails.
"""
import os
import sys

import torch

# The PyTorch versions of the zoo models live with the benchmarks.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
from torch_zoo import bert, gpt, load  # noqa: E402

RTOL = 1e-4  # relative to the tensor's largest magnitude, f32 on both sides
ATOL = 1e-7


def compare(name, ours, theirs):
    scale = theirs.abs().max().item()
    diff = (ours - theirs).abs().max().item()
    allowed = RTOL * scale + ATOL
    ok = diff <= allowed
    print(f"TENSOR {'OK  ' if ok else 'FAIL'}  {name:<40} max diff {diff:.2e}  "
          f"({100 * diff / allowed:.1f}% of tolerance)")
    return ok


def main():
    model, directory = sys.argv[1], sys.argv[2]
    torch.set_num_threads(2)
    tensors = load(directory)
    params = {name: t.clone().requires_grad_() for (kind, name), t in tensors.items() if kind == "param"}
    ids, targets = tensors[("input", "ids")], tensors[("input", "targets")]
    if model == "gpt-mini":
        loss = gpt(params, ids, targets, layers=4, heads=4)
    elif model == "bert-mini":
        loss = bert(params, ids, targets, layers=4, heads=4)
    else:
        sys.exit(f"unknown model {model}")
    loss.backward()
    ok = compare("loss", tensors[("output", "loss")].reshape(()), loss.detach())
    for name, p in params.items():
        ok = compare("grad " + name, tensors[("grad", name)], p.grad) and ok
    print(f"{model}: {'all tensors match' if ok else 'MISMATCH'} (loss {loss.item():.6f})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
