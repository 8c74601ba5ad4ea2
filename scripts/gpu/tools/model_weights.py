#!/usr/bin/env python3
"""Ships big models to the GPU machine without their weights (the bundle must stay under 60 MiB).

  model_weights.py strip IN.onnx OUT.onnx [--min-elements N]
      Replaces every float32 initializer of at least N elements (default 65536) read as a
      Conv / ConvTranspose / Gemm / MatMul weight (with --every-float: any) with a recipe: its dims and the root mean
      square of each slice along its first axis (a convolution's output channels, where an
      exporter folded BatchNorm's per-channel scale). The recipe goes in the initializer's
      doc_string as "loom-recipe rms=<r0>,<r1>,..."; its data is dropped.
  model_weights.py restore IN.onnx OUT.onnx
      Regenerates each recipe's values: uniform with each slice's RMS, from a counter-based
      generator (splitmix64 of the element index and a hash of the initializer's name), in numpy
      only, so the same bytes come out on any machine. Keeping each slice's scale keeps the
      activations at the scale the model was exported (and its BatchNorm folded) for.
Needs numpy and onnx.
"""
import argparse
import hashlib
import sys

import numpy as np
import onnx
from onnx import numpy_helper

RECIPE = "loom-recipe rms="
WEIGHT_OPS = {"Conv": 1, "ConvTranspose": 1, "Gemm": 1, "MatMul": 1}


def weight_names(graph):
    names = set()
    for node in graph.node:
        k = WEIGHT_OPS.get(node.op_type)
        if k is not None and len(node.input) > k:
            names.add(node.input[k])
    return names


def splitmix64(x):
    x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def recipe_values(name, dims, rms):
    n = int(np.prod(dims)) if dims else 1
    seed = np.uint64(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little"))
    with np.errstate(over="ignore"):
        bits = splitmix64(np.arange(n, dtype=np.uint64) + seed)
    unit = (bits >> np.uint64(40)).astype(np.float64) / float(1 << 24)  # [0, 1)
    # Uniform in [-a, a) has RMS a / sqrt(3).
    bound = np.sqrt(3.0) * np.asarray(rms, dtype=np.float64)
    rows = (unit * 2.0 - 1.0).reshape(len(rms), -1) * bound[:, None]
    return rows.astype(np.float32).reshape(dims)


def strip(src, dst, min_elements, every_float=False):
    model = onnx.load(src)
    weights = weight_names(model.graph) if not every_float else {i.name for i in model.graph.initializer}
    stripped = 0
    for init in model.graph.initializer:
        if init.name not in weights or init.data_type != onnx.TensorProto.FLOAT:
            continue
        values = numpy_helper.to_array(init)
        if values.size < min_elements:
            continue
        rows = values.reshape(values.shape[0], -1).astype(np.float64)
        rms = np.sqrt(np.mean(rows * rows, axis=1))
        init.CopyFrom(onnx.TensorProto(name=init.name, dims=list(init.dims), data_type=onnx.TensorProto.FLOAT,
                                       doc_string=RECIPE + ",".join(repr(float(r)) for r in rms)))
        stripped += 1
    onnx.save(model, dst)
    print(f"{dst}: {stripped} initializers replaced by recipes")


def restore(src, dst):
    model = onnx.load(src)
    restored = 0
    for init in model.graph.initializer:
        if not init.doc_string.startswith(RECIPE):
            continue
        rms = [float(r) for r in init.doc_string[len(RECIPE):].split(",")]
        values = recipe_values(init.name, list(init.dims), rms)
        init.CopyFrom(numpy_helper.from_array(values, init.name))
        restored += 1
    onnx.save(model, dst)
    print(f"{dst}: {restored} initializers regenerated")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("action", choices=["strip", "restore"])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--min-elements", type=int, default=65536)
    p.add_argument("--every-float", action="store_true",
                   help="strip every big float32 initializer (embeddings too), not only layer weights")
    a = p.parse_args()
    if a.action == "strip":
        strip(a.src, a.dst, a.min_elements, a.every_float)
    else:
        restore(a.src, a.dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
