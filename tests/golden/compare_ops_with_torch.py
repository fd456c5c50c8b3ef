"""Recompute every case of golden_ops with PyTorch and compare.

Usage: compare_ops_with_torch.py <dump-dir>

For each case, PyTorch evaluates the same function on the same f32 inputs,
backpropagates sum(out * w), and the output and every input gradient must
match Sinter's by closeness.py's rules (TOLERANCE: each element within 5e-6
of the tensor's largest finite magnitude plus 1e-5 of its own, the
difference's norm within 5e-6 of the tensor's; a NaN never passes). Sinter's
reference computes in double, PyTorch in f32: the largest differences
measured are 3e-7 of the largest element and 2.7e-7 in norm. dropout in training mode is compared with its mask
recomputed here from Philox 4x32-10 (checked first against Random123's
published vectors) and the generator state Sinter used.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

from closeness import Tolerance, compare as closeness

TOLERANCE = Tolerance(of_largest=5e-6, of_element=1e-5, absolute=1e-7, of_norm=5e-6)
MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF


def philox4x32_10(counter, key):
    """Philox 4x32-10 (Salmon et al., SC 2011) of four arrays of 32-bit
    counter words under a two-word key: the four arrays of output words."""
    c = [np.asarray(w, dtype=np.uint64) for w in counter]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & np.uint64(MASK32)
        hi1, lo1 = p1 >> np.uint64(32), p1 & np.uint64(MASK32)
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        k0 = np.uint64((int(k0) + 0x9E3779B9) & MASK32)
        k1 = np.uint64((int(k1) + 0xBB67AE85) & MASK32)
    return c


# Random123's published answers (kat_vectors), so that this reference is
# checked before it checks anything.
for counter, key, want in [
        ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
        ((MASK32,) * 4, (MASK32, MASK32), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
        ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
         (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]:
    got = tuple(int(w) for w in philox4x32_10([[w] for w in counter], key))
    assert got == want, f"philox4x32_10{counter, key} = {[hex(w) for w in got]}"


def random_key(seed, stream):
    """The key of a random op (philox.h randomKey: SplitMix64, 52 bits)."""
    z = (seed + 0x9E3779B97F4A7C15 * (stream + 1)) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return (z ^ (z >> 31)) & ((1 << 52) - 1)


def uniform(key, count):
    """Sinter's rand(): element i is word 0 of Philox({i, 0, 0, 0}, key) over 2^32, 24 bits."""
    index = np.arange(count, dtype=np.uint64)
    zeros = np.zeros(count, dtype=np.uint64)
    words = philox4x32_10([index & np.uint64(MASK32), index >> np.uint64(32), zeros, zeros],
                          (key & MASK32, key >> 32))
    return torch.from_numpy((words[0] >> np.uint64(8)).astype(np.float32) / np.float32(1 << 24))


def dropout_train(x, rng):
    """dropout(x, 0.25) in training: the first random stream's mask."""
    seed, stream = rng
    keep = uniform(random_key(seed, stream), x.numel()).reshape(x.shape) >= 0.25
    return torch.where(keep, x * (1 / 0.75), torch.zeros_like(x))

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
    "sin": lambda x: x[0].sin(),
    "cos": lambda x: x[0].cos(),
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
    # The mask is not PyTorch's generator's: it is recomputed here from
    # Sinter's generator state before the case (`rng`).
    "dropout_train": lambda x, rng: dropout_train(x[0], rng),
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
    result = closeness(name, ours, theirs, TOLERANCE)
    print(result.line)
    return result.ok


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
        if case == "dropout_train":
            with open(os.path.join(sys.argv[1], case + ".rng")) as f:
                out = fn(inputs, tuple(int(v) for v in f.read().split()))
            kept = float((out != 0).double().mean())
            if not 0.65 < kept < 0.85:
                print(f"dropout_train keeps {kept:.2f} of its elements, not about 0.75")
                ok = False
        else:
            out = fn(inputs)
        (out * tensors[f"{case}.w"]).sum().backward()
        ok = compare(case + " forward", tensors[f"{case}.out"], out.detach()) and ok
        for i, x in enumerate(inputs):
            ok = compare(f"{case} grad #{i}", tensors[f"{case}.grad{i}"], x.grad) and ok
    print("all ops match PyTorch" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
