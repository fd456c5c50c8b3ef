"""Recompute every case of golden_ops with PyTorch and compare.

Usage: compare_ops_with_torch.py <dump-dir>

For each case, PyTorch evaluates the same function on the same f32 inputs,
backpropagates sum(out * w), and the output and every input gradient must
match Sinter's: max|sinter - torch| <= RTOL * max|torch| + ATOL.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

RTOL = 1e-5
ATOL = 1e-7

TARGETS = torch.tensor([2, 0, -100, 1])
IDS = torch.tensor([[1, 3], [1, 0]])


def attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v


CASES = {
    "add_broadcast": lambda x: x[0] + x[1],
    "sub_broadcast": lambda x: x[0] - x[1],
    "mul": lambda x: x[0] * x[1],
    "div": lambda x: x[0] / x[1],
    "scalar_ops": lambda x: 3 * x[0] - 2 / (x[0] * x[0] + 1) + 0.5,
    "neg": lambda x: -x[0],
    "exp": lambda x: x[0].exp(),
    "log": lambda x: x[0].log(),
    "tanh": lambda x: x[0].tanh(),
    "sqrt": lambda x: x[0].sqrt(),
    "rsqrt": lambda x: x[0].rsqrt(),
    "sigmoid": lambda x: x[0].sigmoid(),
    "erf": lambda x: torch.erf(x[0]),
    "abs": lambda x: x[0].abs(),
    "relu": lambda x: x[0].relu(),
    "pow_scalar": lambda x: x[0] ** 3,
    "pow_tensor": lambda x: x[0] ** x[1],
    "maximum": lambda x: torch.maximum(x[0], x[1]),
    "minimum": lambda x: torch.minimum(x[0], x[1]),
    "where": lambda x: torch.where(x[0] > 0, x[0] * 2, x[1]),
    "masked_fill": lambda x: x[0].masked_fill(x[0] > 0.5, 0.0) * x[0],
    "reshape": lambda x: x[0].reshape(3, 2),
    "permute": lambda x: x[0].permute(2, 0, 1),
    "transpose": lambda x: x[0].transpose(0, 2),
    "expand": lambda x: x[0].expand(4, 2, 3),
    "slice_step": lambda x: x[0][1:7:3, 0:5:2],
    "cat": lambda x: torch.cat([x[0], x[1] * 2, x[0]], 1),
    "stack": lambda x: torch.stack([x[0], x[1]], 1),
    "sum_dims": lambda x: x[0].sum((0, 2)),
    "mean_keepdim": lambda x: x[0].mean(-1, keepdim=True) * x[0],
    "amax": lambda x: x[0].amax(1),
    "matmul": lambda x: x[0] @ x[1],
    "matmul_batched": lambda x: x[0] @ x[1],
    "matmul_shared_rhs": lambda x: x[0] @ x[1],
    "matmul_vectors": lambda x: x[0] @ x[1],
    "linear": lambda x: F.linear(x[0], x[1], x[2]),
    "gelu": lambda x: F.gelu(x[0]),
    "gelu_tanh": lambda x: F.gelu(x[0], approximate="tanh"),
    "softmax": lambda x: F.softmax(x[0], 1),
    "log_softmax": lambda x: F.log_softmax(x[0], -1),
    "layer_norm": lambda x: F.layer_norm(x[0], (4,), x[1], x[2]),
    "dropout_eval": lambda x: F.dropout(x[0], 0.5, training=False),
    "embedding": lambda x: F.embedding(IDS, x[0]),
    "cross_entropy": lambda x: F.cross_entropy(x[0], TARGETS),
    "cross_entropy_sum": lambda x: F.cross_entropy(x[0], TARGETS, reduction="sum"),
    "mse_loss": lambda x: F.mse_loss(x[0], x[1]),
    "attention_causal": lambda x: attention(x[0], x[1], x[2]),
    "conv2d": lambda x: F.conv2d(x[0], x[1], x[2]),
    "conv2d_strided_grouped": lambda x: F.conv2d(x[0], x[1], None, (2, 1), (1, 2), (1, 2), 2),
    "max_pool2d": lambda x: F.max_pool2d(x[0], (3, 3), (2, 2), (1, 1)),
    "avg_pool2d": lambda x: F.avg_pool2d(x[0], (3, 2), (1, 2), (1, 1)),
    "batch_norm_train": lambda x: F.batch_norm(x[0], torch.zeros(3), torch.ones(3), x[1], x[2], True),
}


def load(directory):
    tensors = {}
    with open(os.path.join(directory, "manifest.txt")) as manifest:
        for line in manifest:
            name, *shape = line.split()
            data = np.fromfile(os.path.join(directory, name + ".bin"), dtype=np.float32)
            tensors[name] = torch.from_numpy(data.reshape([int(d) for d in shape]))
    return tensors


def compare(name, ours, theirs):
    scale = theirs.abs().max().item() if theirs.numel() else 0.0
    diff = (ours - theirs).abs().max().item() if theirs.numel() else 0.0
    allowed = RTOL * scale + ATOL
    ok = ours.shape == theirs.shape and diff <= allowed
    print(f"TENSOR {'OK  ' if ok else 'FAIL'}  {name:<34} max diff {diff:.2e}  "
          f"({100 * diff / allowed:.1f}% of tolerance)")
    return ok


def main():
    torch.set_num_threads(1)
    tensors = load(sys.argv[1])
    ok = True
    seen = {name.split(".")[0] for name in tensors}
    missing = set(CASES) ^ seen
    if missing:
        print(f"cases missing on one side: {sorted(missing)}")
        ok = False
    for case, fn in CASES.items():
        inputs = []
        while f"{case}.in{len(inputs)}" in tensors:
            inputs.append(tensors[f"{case}.in{len(inputs)}"].clone().requires_grad_())
        out = fn(inputs)
        (out * tensors[f"{case}.w"]).sum().backward()
        ok = compare(case + " forward", tensors[f"{case}.out"], out.detach()) and ok
        for i, x in enumerate(inputs):
            ok = compare(f"{case} grad #{i}", tensors[f"{case}.grad{i}"], x.grad) and ok
    print("all ops match PyTorch" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
