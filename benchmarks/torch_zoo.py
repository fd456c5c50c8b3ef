"""Sinter's model zoo in PyTorch, as functions of a parameter dict.

The parameter names are Sinter's (`Module::named_parameters`), so the weights
that `sinter-bench --dump-weights DIR` (or the golden tests) write load
as they are: the same model, the same weights, in both frameworks.
Used by benchmarks/torch_baseline.py and tests/golden/compare_with_torch.py.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F


def load(directory):
    """Reads a manifest.txt and its raw little-endian tensors:
    {(kind, name): tensor}."""
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
        mask = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, dim)
    return F.linear(out, p[prefix + ".out_proj.weight"], p[prefix + ".out_proj.bias"])


def gpt(p, ids, targets, layers=4, heads=4):
    length = ids.shape[1]
    x = p["wte.weight"][ids] + p["wpe.weight"][torch.arange(length, device=ids.device)]
    for i in range(layers):
        b = f"h.{i}"
        x = x + attention(layer_norm(x, p, b + ".ln_1", 1e-5), p, b + ".attn", heads, True)
        h = F.linear(layer_norm(x, p, b + ".ln_2", 1e-5), p[b + ".c_fc.weight"], p[b + ".c_fc.bias"])
        x = x + F.linear(F.gelu(h, approximate="tanh"), p[b + ".c_proj.weight"], p[b + ".c_proj.bias"])
    x = layer_norm(x, p, "ln_f", 1e-5)
    logits = x @ p["wte.weight"].t()
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def bert(p, ids, targets, layers=4, heads=4):
    length = ids.shape[1]
    x = (p["word_embeddings.weight"][ids] + p["position_embeddings.weight"][torch.arange(length, device=ids.device)]
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


def mlp(p, x, targets):
    h = F.relu(F.linear(x, p["0.weight"], p["0.bias"]))
    return F.cross_entropy(F.linear(h, p["2.weight"], p["2.bias"]), targets)


def lenet(p, x, targets):
    x = F.max_pool2d(F.relu(F.conv2d(x, p["0.weight"], p["0.bias"], padding=2)), 2)
    x = F.max_pool2d(F.relu(F.conv2d(x, p["3.weight"], p["3.bias"])), 2).flatten(1)
    x = F.relu(F.linear(x, p["7.weight"], p["7.bias"]))
    x = F.relu(F.linear(x, p["9.weight"], p["9.bias"]))
    return F.cross_entropy(F.linear(x, p["11.weight"], p["11.bias"]), targets)


def _bn(x, p, prefix):
    # Training mode: batch statistics, as Sinter's BatchNorm2d in a training step.
    return F.batch_norm(x, None, None, p[prefix + ".weight"], p[prefix + ".bias"], training=True,
                        eps=1e-5)


def resnet18(p, x, targets):
    x = F.relu(_bn(F.conv2d(x, p["stem.0.weight"], padding=1), p, "stem.1"))
    for stage in range(4):
        for block in range(2):
            b = f"layer{stage + 1}.{block}"
            stride = 2 if stage > 0 and block == 0 else 1
            y = F.relu(_bn(F.conv2d(x, p[b + ".conv1.weight"], stride=stride, padding=1), p, b + ".bn1"))
            y = _bn(F.conv2d(y, p[b + ".conv2.weight"], padding=1), p, b + ".bn2")
            if b + ".downsample.0.weight" in p:
                x = _bn(F.conv2d(x, p[b + ".downsample.0.weight"], stride=stride), p, b + ".downsample.1")
            x = F.relu(y + x)
    return F.cross_entropy(F.linear(x.mean((2, 3)), p["fc.weight"], p["fc.bias"]), targets)


LOSSES = {"gpt-mini": gpt, "bert-mini": bert, "mlp": mlp, "lenet": lenet, "resnet18": resnet18}
