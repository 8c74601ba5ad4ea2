#!/usr/bin/env python3
"""Pad alone, Loom (cpu_onednn's host step) against ONNX Runtime, side by side (issue 31: "the
reference Pad is very slow"). Writes a reflect / edge / constant Pad of a [1, 64, 256, 256] float
map with 3-pixel borders, its input, and times each mode with `loom bench` and bench/ort_bench.js in
alternating rounds at 1 and 2 threads; prints the medians and Loom / ORT ratios.

  python3 bench/pad_benchmark.py --loom build/bin/loom --ort-dir build/models [--rounds 5] [--work DIR]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def pad_model(path, mode):
    pads = numpy_helper.from_array(np.array([0, 0, 3, 3, 0, 0, 3, 3], dtype=np.int64), "pads")
    g = helper.make_graph([helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)], "pad",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 256, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [pads])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def median_ms(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["median_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loom", default="build/bin/loom")
    ap.add_argument("--ort-dir", default="build/models")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", default=tempfile.mkdtemp(prefix="loom_pad_"))
    a = ap.parse_args()
    x = os.path.join(a.work, "x.pb")
    with open(x, "wb") as f:
        f.write(numpy_helper.from_array(np.random.default_rng(0).standard_normal([1, 64, 256, 256]).astype(np.float32),
                                        "x").SerializeToString())
    print("mode      threads  loom_ms  ort_ms  loom/ort")
    for mode in ("reflect", "edge", "constant"):
        model = os.path.join(a.work, f"pad_{mode}.onnx")
        pad_model(model, mode)
        for threads in (1, 2):
            loom, ort = [], []
            for _ in range(a.rounds):
                loom.append(median_ms([a.loom, "bench", "--model", model, "--input", f"x={x}", "--providers",
                                       "cpu_onednn,reference", "--threads", str(threads), "--runs", "20", "--json"]))
                ort.append(median_ms(["node", os.path.join(HERE, "ort_bench.js"), "--model", model, "--input",
                                      f"x={x}", "--threads", str(threads), "--runs", "20", "--ort-dir", a.ort_dir]))
            l, o = statistics.median(loom), statistics.median(ort)
            print(f"{mode:9} {threads:7}  {l:7.2f}  {o:6.2f}  {l / o:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
