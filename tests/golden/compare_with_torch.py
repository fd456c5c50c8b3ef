"""Recompute a Sinter model step with PyTorch and compare.

Usage: compare_with_torch.py <gpt-mini|bert-mini> <dump-dir>

Reads what golden_models wrote (parameters, inputs, loss, gradients), builds
the same architecture in PyTorch with those parameters, runs forward, loss
and backward in float32, and compares the loss and every parameter gradient.
A tensor passes when max|sinter - torch| <= RTOL * max|torch| (+ ATOL for
all-zero tensors). Exit status 1 if anything fails.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

RTOL = 1e-4  # relative to the tensor's largest magnitude, f32 on both sides
ATOL = 1e-7


def load(directory):
    tensors = {}
    with open(os.path.join(directory, "manifest.txt")) as manifest:
        for line in manifest:
            kind, name, dtype, *shape = line.split()
            path = os.path.join(directory, f"{kind}.{name}.bin")
            data = np.fromfile(path, dtype=np.int64 if dtype == "i64" else np.float32)
            tensors[(kind, name)] = torch.from_numpy(data.reshape([int(d) for d in shape]))
    return tensors


def layer_norm(x, p, prefix, eps):
    return F.layer_norm(x, x.shape[-1:], p[prefix + ".weight"], p[prefix + ".bias"], eps)


def attention(x, p, prefix, heads, causal):
    batch, length, dim = x.shape
    head = dim // heads
    qkv = F.linear(x, p[prefix + ".in_proj_weight"], p[prefix + ".in_proj_bias"])
    q, k, v = (t.reshape(batch, length, heads, head).transpose(1, 2) for t in qkv.split(dim, -1))
    scores = q @ k.transpose(-2, -1) / math.sqrt(head)
    if causal:
        mask = torch.ones(length, length, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, dim)
    return F.linear(out, p[prefix + ".out_proj.weight"], p[prefix + ".out_proj.bias"])


def gpt(p, ids, targets, layers, heads):
    length = ids.shape[1]
    x = p["wte.weight"][ids] + p["wpe.weight"][torch.arange(length)]
    for i in range(layers):
        b = f"h.{i}"
        x = x + attention(layer_norm(x, p, b + ".ln_1", 1e-5), p, b + ".attn", heads, True)
        h = F.linear(layer_norm(x, p, b + ".ln_2", 1e-5), p[b + ".c_fc.weight"], p[b + ".c_fc.bias"])
        x = x + F.linear(F.gelu(h, approximate="tanh"), p[b + ".c_proj.weight"], p[b + ".c_proj.bias"])
    x = layer_norm(x, p, "ln_f", 1e-5)
    logits = x @ p["wte.weight"].t()
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def bert(p, ids, targets, layers, heads):
    length = ids.shape[1]
    x = (p["word_embeddings.weight"][ids] + p["position_embeddings.weight"][torch.arange(length)]
         + p["token_type_embeddings.weight"][0])
    x = layer_norm(x, p, "embeddings_ln", 1e-12)
    for i in range(layers):
        b = f"layers.{i}"
        y = layer_norm(x + attention(x, p, b + ".attn", heads, False), p, b + ".attn_ln", 1e-12)
        h = F.gelu(F.linear(y, p[b + ".fc1.weight"], p[b + ".fc1.bias"]))
        x = layer_norm(y + F.linear(h, p[b + ".fc2.weight"], p[b + ".fc2.bias"]), p, b + ".ffn_ln", 1e-12)
    pooled = torch.tanh(F.linear(x[:, 0], p["pooler.weight"], p["pooler.bias"]))
    logits = F.linear(pooled, p["classifier.weight"], p["classifier.bias"])
    return F.cross_entropy(logits, targets)


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
