#!/usr/bin/python3
"""An artifact's weights and its first batch as benchmarks/torch_baseline.py reads them
(the layout of `sinter-bench --dump-weights`), for tools/gpu_check.sh.

Usage: gpu_torch_weights.py ARTIFACT BATCHES OUT   (prints the batch size and length)
"""
import json, os, struct, sys
artifact, batches, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
raw = open(artifact + "/weights.safetensors", "rb").read()
size = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + size])
lines = []
for name, info in header.items():
    if name == "__metadata__" or not name.startswith("model."):
        continue
    begin, end = info["data_offsets"]
    key = name[len("model."):]
    open(f"{out}/param.{key}.bin", "wb").write(raw[8 + size + begin:8 + size + end])
    lines.append(f"param {key} f32 {' '.join(map(str, info['shape']))}")
inputs = json.load(open(artifact + "/manifest.json"))["functions"]["train_step"]["inputs"]
data = open(batches, "rb")
shape = None
for value in inputs:
    count = 1
    for d in value["shape"]:
        count *= d
    name = {"input": "inputs", "target": "targets"}[value["name"]]
    open(f"{out}/input.{name}.bin", "wb").write(data.read(8 * count))
    lines.append(f"input {name} i64 {' '.join(map(str, value['shape']))}")
    if value["name"] == "input":
        shape = value["shape"]
open(out + "/manifest.txt", "w").write("\n".join(lines) + "\n")
print(shape[0], shape[1])
