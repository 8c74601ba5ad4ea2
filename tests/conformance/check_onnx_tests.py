#!/usr/bin/python3
"""Outside conformance harness: runs ONNX backend test cases through the
`loom run` command line and compares the saved outputs with the expected ones.

Contract with `loom run` (the same one other harnesses use):
  loom run --model M.onnx --input NAME=PATH.pb ... --save-outputs DIR
writes DIR/<output name>.pb (TensorProto, or SequenceProto / OptionalProto for
sequence / optional outputs) and exits non-zero with a one-line reason on
stderr when it cannot run the model.

Comparison: rtol 1e-3, atol 1e-7, NaN equals NaN, exact for integers, booleans
and strings; dtype and shape must match.

Usage: check_onnx_tests.py --loom build/bin/loom [--suite DIR] [--filter REGEX]
                           [--jobs N] [--report FILE] [--extra-args "..."]
Prints one line per failure and ends with "N passed, M failed".
"""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DEFAULT_SUITE = "/usr/share/libonnx-testdata/data/node"


def load_value(path, type_proto):
    """Loads a .pb holding the value of `type_proto`'s kind, as numpy / list / None."""
    data = open(path, "rb").read()
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return [numpy_helper.to_array(t) for t in seq.tensor_values]
    if kind == "optional_type":
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        if opt.HasField("tensor_value"):
            return numpy_helper.to_array(opt.tensor_value)
        if opt.HasField("sequence_value"):
            return [numpy_helper.to_array(t) for t in opt.sequence_value.tensor_values]
        return None
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def compare(expected, actual, where):
    """Returns None when equal within tolerance, else a reason."""
    if isinstance(expected, list) or isinstance(actual, list):
        if not (isinstance(expected, list) and isinstance(actual, list)):
            return f"{where}: kind differs (sequence vs tensor)"
        if len(expected) != len(actual):
            return f"{where}: sequence length {len(actual)} != {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            r = compare(e, a, f"{where}[{i}]")
            if r:
                return r
        return None
    if expected is None or actual is None:
        return None if expected is None and actual is None else f"{where}: optional presence differs"
    if expected.dtype != actual.dtype:
        return f"{where}: dtype {actual.dtype} != expected {expected.dtype}"
    if expected.shape != actual.shape:
        return f"{where}: shape {actual.shape} != expected {expected.shape}"
    if expected.dtype.kind in "fc":
        e = expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64)
        a = actual.astype(e.dtype)
        ok = np.isclose(a, e, rtol=1e-3, atol=1e-7, equal_nan=True)
        if not ok.all():
            bad = np.argwhere(~ok)[0]
            return f"{where}: mismatch at {tuple(bad)}: {a[tuple(bad)]} vs {e[tuple(bad)]} ({(~ok).sum()} of {ok.size})"
        return None
    if not np.array_equal(expected, actual):
        bad = np.argwhere(expected != actual)
        at = tuple(bad[0]) if len(bad) else ()
        return f"{where}: values differ at {at}"
    return None


def run_case(loom, case_dir, extra_args, timeout):
    """Runs every data set of one case; returns (name, reason or None)."""
    name = os.path.basename(case_dir.rstrip("/"))
    model_path = os.path.join(case_dir, "model.onnx")
    try:
        model = onnx.load(model_path, load_external_data=False)
    except Exception as e:  # the harness's own loader failed: not Loom's fault, but a failure
        return name, f"harness cannot read model: {e}"
    graph = model.graph
    init_names = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in init_names]
    data_sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
    if not data_sets:
        return name, "no test data sets"
    for ds in data_sets:
        in_files = sorted(glob.glob(os.path.join(ds, "input_*.pb")), key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        out_files = sorted(glob.glob(os.path.join(ds, "output_*.pb")), key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        with tempfile.TemporaryDirectory() as out_dir:
            cmd = [loom, "run", "--model", model_path, "--save-outputs", out_dir]
            for i, f in enumerate(in_files):
                if i >= len(inputs):
                    return name, "more input files than graph inputs"
                cmd += ["--input", f"{inputs[i].name}={f}"]
            cmd += extra_args
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return name, f"timeout after {timeout}s"
            if p.returncode != 0:
                msg = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
                if p.returncode < 0:
                    msg = f"crashed with signal {-p.returncode}: {msg}"
                return name, f"loom exit {p.returncode}: {msg[:300]}"
            for i, f in enumerate(out_files):
                out = graph.output[i]
                expected = load_value(f, out.type)
                saved = os.path.join(out_dir, out.name + ".pb")
                if not os.path.exists(saved):
                    return name, f"output '{out.name}' not saved"
                try:
                    actual = load_value(saved, out.type)
                except Exception as e:
                    return name, f"output '{out.name}' unreadable: {e}"
                r = compare(expected, actual, f"output '{out.name}'")
                if r:
                    return name, r
    return name, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loom", required=True)
    ap.add_argument("--suite", default=DEFAULT_SUITE)
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--report", help="write 'name<TAB>PASS|reason' lines here")
    ap.add_argument("--extra-args", default="", help="more arguments for loom run")
    args = ap.parse_args()

    cases = sorted(d for d in glob.glob(os.path.join(args.suite, "*")) if os.path.isfile(os.path.join(d, "model.onnx")))
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, os.path.basename(c))]
    extra = args.extra_args.split()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name, reason in pool.map(lambda c: run_case(args.loom, c, extra, args.timeout), cases):
            results.append((name, reason))
            if reason:
                print(f"FAIL {name}: {reason}", flush=True)
    passed = sum(1 for _, r in results if r is None)
    if args.report:
        with open(args.report, "w") as f:
            for name, reason in results:
                f.write(f"{name}\t{'PASS' if reason is None else reason}\n")
    print(f"{passed} passed, {len(results) - passed} failed")


if __name__ == "__main__":
    sys.exit(main())
