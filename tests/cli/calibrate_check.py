#!/usr/bin/python3
"""Checks of `loom calibrate`, driven by ctest.

  calibrate_check.py --loom L --work DIR

Builds a small float model with the onnx package,

    x [1, 8] -> MatMul W [8, 4] -> mm -> Add b [4] -> a -> Relu -> y
                                                    a -> Sigmoid -> z

writes a calibration set of 12 samples (numpy, seeded) in the three
layouts `loom calibrate --data` reads (.npy per input in sample folders,
ONNX test-data style input_0.pb folders, loose .npy files), and checks:

- minmax: the ranges of x, mm, a, y, z equal numpy's min/max over all
  samples (float32 accumulation, within 1e-5 relative), the same for every
  layout; with --op-types Relu only a and y are calibrated;
- minmax --symmetric: [-m, m] with m = max |v|;
- entropy, percentile: every tensor gets a range inside the observed
  [min, max] (percentile: symmetric by default) and a histogram;
  distribution: mean and standard deviation near numpy's, and the float8
  range ORT's quantizer derives from them; the SVG names the tensors;
- errors: a missing data folder is one line on stderr with exit 1 naming
  it; an unknown method is a usage error (exit 2); a sample missing an
  input names the sample.
Exit 0 on success, 1 with a reason on stderr otherwise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SAMPLES = 12


def fail(msg):
    print("calibrate_check: " + msg, file=sys.stderr)
    sys.exit(1)


def build_model(path, rng):
    w = rng.standard_normal((8, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "b"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["y"], name="relu"),
        helper.make_node("Sigmoid", ["a"], ["z"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "calib", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return w, b


def expected_minmax(xs, w, b):
    values = {k: [] for k in ("x", "mm", "a", "y", "z")}
    for x in xs:
        mm = x @ w
        a = mm + b
        values["x"].append(x)
        values["mm"].append(mm)
        values["a"].append(a)
        values["y"].append(np.maximum(a, 0))
        values["z"].append(1 / (1 + np.exp(-a)))
    return {k: (float(np.min(v)), float(np.max(v))) for k, v in values.items()}, values


def write_data(work, xs):
    layouts = {}
    npy_folders = os.path.join(work, "npy_folders")
    pb_folders = os.path.join(work, "pb_folders")
    loose = os.path.join(work, "loose")
    for d in (npy_folders, pb_folders, loose):
        os.makedirs(d)
    for i, x in enumerate(xs):
        os.makedirs(os.path.join(npy_folders, "s%02d" % i))
        np.save(os.path.join(npy_folders, "s%02d" % i, "x.npy"), x)
        sample = os.path.join(pb_folders, "test_data_set_%02d" % i)
        os.makedirs(sample)
        with open(os.path.join(sample, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        np.save(os.path.join(loose, "%02d.npy" % i), x)
    layouts["npy_folders"] = npy_folders
    layouts["pb_folders"] = pb_folders
    layouts["loose"] = loose
    return layouts


def run(loom, *args, expect=0):
    p = subprocess.run([loom, "calibrate", *args], capture_output=True, text=True)
    if p.returncode != expect:
        fail("loom calibrate %s: exit %d (expected %d)\nstdout: %s\nstderr: %s" %
             (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def read_ranges(path):
    with open(path) as f:
        return json.load(f)["ranges"]


def close(a, b):
    return abs(a - b) <= 1e-5 * max(1.0, abs(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loom", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    rng = np.random.default_rng(7)
    model = os.path.join(a.work, "model.onnx")
    w, b = build_model(model, rng)
    xs = [(rng.standard_normal((1, 8)) * (1 + i)).astype(np.float32) for i in range(SAMPLES)]
    expected, values = expected_minmax(xs, w, b)
    layouts = write_data(a.work, xs)

    for layout, data in layouts.items():
        out = os.path.join(a.work, layout + ".json")
        p = run(a.loom, "--model", model, "--data", data, "--out", out)
        if "calibrated 5 tensors over 12 samples" not in p.stdout:
            fail("%s: unexpected summary: %s" % (layout, p.stdout))
        ranges = read_ranges(out)
        if set(ranges) != set(expected):
            fail("%s: calibrated %s, expected %s" % (layout, sorted(ranges), sorted(expected)))
        for name, (lo, hi) in expected.items():
            got = ranges[name]
            if not (close(got["low"], lo) and close(got["high"], hi)):
                fail("%s: %s range [%g, %g], numpy says [%g, %g]" % (layout, name, got["low"], got["high"], lo, hi))

    out = os.path.join(a.work, "relu_only.json")
    run(a.loom, "--model", model, "--data", layouts["npy_folders"], "--out", out, "--op-types", "Relu", "--quiet")
    if set(read_ranges(out)) != {"a", "y"}:
        fail("--op-types Relu calibrated %s, expected a and y" % sorted(read_ranges(out)))

    out = os.path.join(a.work, "symmetric.json")
    run(a.loom, "--model", model, "--data", layouts["npy_folders"], "--out", out, "--symmetric", "--quiet")
    for name, (lo, hi) in expected.items():
        m = max(abs(lo), abs(hi))
        got = read_ranges(out)[name]
        if not (close(got["low"], -m) and close(got["high"], m)):
            fail("symmetric: %s range [%g, %g], expected [%g, %g]" % (name, got["low"], got["high"], -m, m))

    for method in ("entropy", "percentile", "distribution"):
        out = os.path.join(a.work, method + ".json")
        svg = os.path.join(a.work, method + ".svg")
        run(a.loom, "--model", model, "--data", layouts["npy_folders"], "--method", method, "--out", out,
            "--histograms", svg, "--quiet")
        ranges = read_ranges(out)
        if set(ranges) != set(expected):
            fail("%s: calibrated %s" % (method, sorted(ranges)))
        for name, (lo, hi) in expected.items():
            got = ranges[name]
            if "hist" not in got or sum(got["hist"]) <= 0:
                fail("%s: %s has no histogram" % (method, name))
            if method == "distribution":
                # Mean and standard deviation of the histogram (ORT's), and
                # the float8 E4M3FN grid ORT's quantizer derives from them:
                # [-448 s, 448 s], s = stddev / 100.06.
                std = float(np.std(np.concatenate([v.ravel() for v in values[name]])))
                if abs(got["stddev"] - std) > 0.02 * std:
                    fail("distribution: %s stddev %g, numpy says %g" % (name, got["stddev"], std))
                if not (close(got["high"], -got["low"]) and abs(got["high"] / got["stddev"] - 448 / 100.06) < 0.01):
                    fail("distribution: %s range [%g, %g] for stddev %g" % (name, got["low"], got["high"], got["stddev"]))
                continue
            slack = 1e-5 * max(1.0, abs(lo), abs(hi))
            if not (lo - slack <= got["low"] <= got["high"] <= hi + slack):
                fail("%s: %s range [%g, %g] not inside the observed [%g, %g]" %
                     (method, name, got["low"], got["high"], lo, hi))
        if method == "percentile":
            # Symmetric by default: [-t, t], then clamped to the observed
            # range (as ONNX Runtime does), so a side may stop at min / max.
            for name in ("mm", "a"):
                lo, hi = ranges[name]["low"], ranges[name]["high"]
                olo, ohi = expected[name]
                if not (close(lo, -hi) or close(lo, olo) or close(hi, ohi)):
                    fail("percentile is symmetric by default, %s got [%g, %g]" % (name, lo, hi))
        with open(svg) as f:
            text = f.read()
        for name in expected:
            if "<svg" not in text or ('font-size="12">%s</text>' % name) not in text:
                fail("%s: the SVG does not name tensor %s" % (method, name))

    p = run(a.loom, "--model", model, "--data", os.path.join(a.work, "nowhere"), expect=1)
    if "nowhere" not in p.stderr or p.stderr.count("\n") != 1:
        fail("missing data folder: %r" % p.stderr)
    run(a.loom, "--model", model, "--data", layouts["loose"], "--method", "kl", expect=2)
    broken = os.path.join(a.work, "broken")
    os.makedirs(os.path.join(broken, "s0"))
    np.save(os.path.join(broken, "s0", "other.npy"), xs[0])
    p = run(a.loom, "--model", model, "--data", broken, expect=1)
    if "no file for input 'x'" not in p.stderr or "s0" not in p.stderr:
        fail("sample missing its input: %r" % p.stderr)
    print("calibrate checks passed")


if __name__ == "__main__":
    main()
