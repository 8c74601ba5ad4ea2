#!/usr/bin/python3
"""Runs an ONNX model through Loom's Python API and prints where each node
ran, what came out, and where the time went.

  PYTHONPATH=build/python examples/python/run_model.py MODEL.onnx [--providers a,b] [--runs N]

Inputs are random, of the declared shapes (symbolic dims are 1). The
session profiles itself; the per-op-type kernel times come from its trace.
"""
import argparse
import collections
import json
import os
import statistics
import tempfile
import time

import numpy as np

import loom


def random_input(arg, rng):
    shape = [d if isinstance(d, int) else 1 for d in arg.shape]
    dtype = arg.type[len("tensor("):-1]
    if dtype == "string":
        return np.array(["loom"] * int(np.prod(shape)), dtype=object).reshape(shape)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    np_type = {"float": np.float32, "double": np.float64}.get(dtype, dtype)
    if np.issubdtype(np.dtype(np_type), np.floating):
        return rng.uniform(-1, 1, shape).astype(np_type)
    return rng.integers(0, 10, shape).astype(np_type)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--providers", help="priority order, e.g. cpu_onednn,reference (default: all)")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()

    options = loom.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tempfile.mkdtemp(prefix="loom_example_"), "profile")
    start = time.perf_counter()
    session = loom.InferenceSession(args.model, options,
                                    providers=args.providers.split(",") if args.providers else None)
    create_ms = (time.perf_counter() - start) * 1e3
    print(f"providers: {', '.join(session.get_providers())}")
    print(session.get_placement(), end="")

    rng = np.random.default_rng(0)
    feed = {i.name: random_input(i, rng) for i in session.get_inputs()}
    latencies = []
    for _ in range(args.runs):
        start = time.perf_counter()
        outputs = session.run(None, feed)
        latencies.append((time.perf_counter() - start) * 1e3)
    for arg, value in zip(session.get_outputs(), outputs):
        print(f"output {arg.name}: {value.dtype} {list(value.shape)}")

    print(f"session created in {create_ms:.1f} ms; {args.runs} runs: median {statistics.median(latencies):.3f} ms, "
          f"min {min(latencies):.3f} ms")
    with open(session.end_profiling()) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernel_us = collections.Counter()
    for e in events:
        if e.get("cat") == "step" and "kernel_us" in e.get("args", {}):
            kernel_us[(e["args"].get("op_type", "?"), e["args"].get("ep", "?"))] += e["args"]["kernel_us"]
    print("kernel time by op type (all runs):")
    for (op, ep), us in kernel_us.most_common(10):
        print(f"  {op:<24} {ep:<12} {us / 1e3:9.3f} ms")


if __name__ == "__main__":
    main()
