"""Sinter's model zoo in JAX, as functions of a parameter dict.

The same models, parameter names and math as benchmarks/torch_zoo.py (and
Sinter's zoo), so the weights `sinter-bench --dump-weights DIR` writes load as
they are. Used by benchmarks/jax_baseline.py.
"""
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def load(directory):
    """Reads a manifest.txt and its raw little-endian tensors:
    {(kind, name): numpy array}."""
    arrays = {}
    with open(os.path.join(directory, "manifest.txt")) as manifest:
        for line in manifest:
            kind, name, dtype, *shape = line.split()
            path = os.path.join(directory, f"{kind}.{name}.bin")
            data = np.fromfile(path, dtype=np.int64 if dtype == "i64" else np.float32)
            arrays[(kind, name)] = data.reshape([int(d) for d in shape])
    return arrays


def cross_entropy(logits, targets):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[:, None], axis=-1))


def linear(x, p, prefix):
    return x @ p[prefix + ".weight"].T + p[prefix + ".bias"]


def layer_norm(x, p, prefix, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p[prefix + ".weight"] + p[prefix + ".bias"]


def attention(x, p, prefix, heads, causal):
    batch, length, dim = x.shape
    head = dim // heads
    qkv = x @ p[prefix + ".in_proj_weight"].T + p[prefix + ".in_proj_bias"]
    q, k, v = (t.reshape(batch, length, heads, head).transpose(0, 2, 1, 3)
               for t in jnp.split(qkv, 3, axis=-1))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head)
    if causal:
        mask = jnp.triu(jnp.ones((length, length), dtype=bool), 1)
        scores = jnp.where(mask, -jnp.inf, scores)
    out = (jax.nn.softmax(scores, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(batch, length, dim)
    return linear(out, p, prefix + ".out_proj")


def gpt(p, ids, targets, layers=4, heads=4):
    length = ids.shape[1]
    x = p["wte.weight"][ids] + p["wpe.weight"][jnp.arange(length)]
    for i in range(layers):
        b = f"h.{i}"
        x = x + attention(layer_norm(x, p, b + ".ln_1", 1e-5), p, b + ".attn", heads, True)
        h = linear(layer_norm(x, p, b + ".ln_2", 1e-5), p, b + ".c_fc")
        x = x + linear(jax.nn.gelu(h, approximate=True), p, b + ".c_proj")
    x = layer_norm(x, p, "ln_f", 1e-5)
    logits = x @ p["wte.weight"].T
    return cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def bert(p, ids, targets, layers=4, heads=4):
    length = ids.shape[1]
    x = (p["word_embeddings.weight"][ids] + p["position_embeddings.weight"][jnp.arange(length)]
         + p["token_type_embeddings.weight"][0])
    x = layer_norm(x, p, "embeddings_ln", 1e-12)
    for i in range(layers):
        b = f"layers.{i}"
        y = layer_norm(x + attention(x, p, b + ".attn", heads, False), p, b + ".attn_ln", 1e-12)
        h = jax.nn.gelu(linear(y, p, b + ".fc1"), approximate=False)
        x = layer_norm(y + linear(h, p, b + ".fc2"), p, b + ".ffn_ln", 1e-12)
    pooled = jnp.tanh(linear(x[:, 0], p, "pooler"))
    return cross_entropy(linear(pooled, p, "classifier"), targets)


def mlp(p, x, targets):
    return cross_entropy(linear(jax.nn.relu(linear(x, p, "0")), p, "2"), targets)


def conv2d(x, w, stride=1, padding=0):
    return lax.conv_general_dilated(x, w, (stride, stride), [(padding, padding)] * 2,
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def max_pool2d(x, size):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, size, size), (1, 1, size, size), "VALID")


def lenet(p, x, targets):
    x = max_pool2d(jax.nn.relu(conv2d(x, p["0.weight"], padding=2) + p["0.bias"][:, None, None]), 2)
    x = max_pool2d(jax.nn.relu(conv2d(x, p["3.weight"]) + p["3.bias"][:, None, None]), 2)
    x = x.reshape(x.shape[0], -1)
    x = jax.nn.relu(linear(x, p, "7"))
    x = jax.nn.relu(linear(x, p, "9"))
    return cross_entropy(linear(x, p, "11"), targets)


def _bn(x, p, prefix):
    # Training mode: batch statistics (biased variance), as Sinter's BatchNorm2d.
    mean = x.mean((0, 2, 3), keepdims=True)
    var = ((x - mean) ** 2).mean((0, 2, 3), keepdims=True)
    scale = p[prefix + ".weight"][:, None, None]
    return (x - mean) / jnp.sqrt(var + 1e-5) * scale + p[prefix + ".bias"][:, None, None]


def resnet18(p, x, targets):
    x = jax.nn.relu(_bn(conv2d(x, p["stem.0.weight"], padding=1), p, "stem.1"))
    for stage in range(4):
        for block in range(2):
            b = f"layer{stage + 1}.{block}"
            stride = 2 if stage > 0 and block == 0 else 1
            y = jax.nn.relu(_bn(conv2d(x, p[b + ".conv1.weight"], stride, 1), p, b + ".bn1"))
            y = _bn(conv2d(y, p[b + ".conv2.weight"], 1, 1), p, b + ".bn2")
            if b + ".downsample.0.weight" in p:
                x = _bn(conv2d(x, p[b + ".downsample.0.weight"], stride), p, b + ".downsample.1")
            x = jax.nn.relu(y + x)
    return cross_entropy(linear(x.mean((2, 3)), p, "fc"), targets)


LOSSES = {"gpt-mini": gpt, "bert-mini": bert, "mlp": mlp, "lenet": lenet, "resnet18": resnet18}
