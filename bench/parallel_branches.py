#!/usr/bin/env python3
"""Sequential vs parallel execution on a model with independent branches.

Builds a model whose output sums N independent branches (each a chain of
MatMul + Relu on the reference EP, one step per node), then times it with
`loom bench` in both execution modes, alternating, several rounds, and
writes the medians and the parallel/sequential ratio to
bench/results/<date>-parallel-branches.md. Issue 6 asks that such a model
runs faster in parallel on 2 cores with identical results (the unit tests
check the results; this checks the speed).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402


def build_model(path, branches, depth, rows, width):
    rng = np.random.default_rng(0)
    nodes, inits, ends = [], [], []
    for b in range(branches):
        prev = "x"
        for d in range(depth):
            w = f"w{b}_{d}"
            inits.append(numpy_helper.from_array((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), w))
            nodes.append(helper.make_node("MatMul", [prev, w], [f"m{b}_{d}"], name=f"matmul{b}_{d}"))
            nodes.append(helper.make_node("Relu", [f"m{b}_{d}"], [f"r{b}_{d}"], name=f"relu{b}_{d}"))
            prev = f"r{b}_{d}"
        ends.append(prev)
    nodes.append(helper.make_node("Sum", ends, ["y"], name="sum"))
    graph = helper.make_graph(nodes, "parallel_branches",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)


def bench(loom, model, config, runs):
    out = subprocess.run([loom, "bench", "--model", model, "--config", config, "--runs", str(runs), "--warmup", "3",
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", default="build/bin/loom")
    ap.add_argument("--branches", type=int, default=2)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--inter-op", type=int, default=1, help="inter-op workers (the calling thread also runs steps)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="loom-parallel-")
    model = os.path.join(work, "parallel_branches.onnx")
    build_model(model, args.branches, args.depth, args.rows, args.width)
    configs = {}
    for mode in ("sequential", "parallel"):
        path = os.path.join(work, mode + ".json")
        with open(path, "w") as f:
            json.dump({"providers": ["reference"], "execution_mode": mode,
                       "threads": {"intra_op": 1, "inter_op": args.inter_op}}, f)
        configs[mode] = path
    medians = {m: [] for m in configs}
    cpu = {m: [] for m in configs}
    for r in range(args.rounds):
        for mode in configs:
            res = bench(args.loom, model, configs[mode], args.runs)
            medians[mode].append(res["median_ms"])
            cpu[mode].append(res["cpu_ms"])
            print(f"round {r + 1} {mode:10s} median {res['median_ms']:.2f} ms, cpu {res['cpu_ms']:.2f} ms/run", flush=True)
    seq, par = statistics.median(medians["sequential"]), statistics.median(medians["parallel"])
    ratio = par / seq
    date = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    report = os.path.join(args.out, f"{date}-parallel-branches.md")
    with open(report, "w") as f:
        f.write(f"# Sequential vs parallel execution ({date})\n\n")
        m = machine.describe(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        f.write(f"Machine: {m['cpu']}, {m['usable_cpus']} usable CPUs, {m['memory_gib']} GiB, {m['os']}; "
                f"loom commit {m['loom_commit']}\n\n")
        f.write(f"Model: {args.branches} independent branches of {args.depth} x (MatMul {args.rows}x{args.width} "
                f"by {args.width}x{args.width} + Relu), summed; reference EP, intra-op 1 thread, parallel mode with "
                f"{args.inter_op} inter-op worker(s) plus the calling thread. `bench/parallel_branches.py`, "
                f"{args.rounds} alternating rounds of {args.runs} runs; median of the per-round medians.\n\n")
        f.write("| mode | median latency (ms) | per-round medians | CPU ms per run (median) |\n|---|---|---|---|\n")
        for mode in configs:
            f.write(f"| {mode} | {statistics.median(medians[mode]):.2f} | "
                    f"{', '.join(f'{v:.2f}' for v in medians[mode])} | {statistics.median(cpu[mode]):.2f} |\n")
        f.write(f"\nparallel / sequential latency: **{ratio:.2f}**\n")
    print(f"parallel / sequential = {ratio:.2f}; wrote {report}")


if __name__ == "__main__":
    main()
