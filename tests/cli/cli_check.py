#!/usr/bin/python3
"""CLI smoke checks for the `loom` command line, driven by ctest.

  cli_check.py expect --exit N [--stdout RE] [--stderr RE] [--one-line] [--quiet-stdout] -- CMD...
      Runs CMD; checks its exit code, that stdout / stderr match the regexes
      (re.search), that stderr is exactly one line (--one-line) and that stdout
      is empty (--quiet-stdout).
  cli_check.py bad-model --loom L --kind truncated|not-onnx|missing --from M --workdir W
      Makes a broken model from M, runs `loom run` on it and expects exit 1 with
      one line on stderr that starts with "loom run: " and names the file.
  cli_check.py compare --loom L --case DIR --workdir W
      Runs an ONNX backend test case (first data set) with --save-outputs and
      compares the saved outputs with output_*.pb: TensorProto, or
      SequenceProto / OptionalProto for sequence / optional outputs (needs onnx
      and numpy; exits 77 = skipped when they are missing).
  cli_check.py bench-json --loom L --model M [--device-io MEMORY] [-- EXTRA...]
      Runs `loom bench --model M --runs 3 --warmup 1 --json [--device-io
      MEMORY] EXTRA...` and checks that stdout is one JSON object with the
      timing keys, non-negative numbers, runs 3, warmup 1, three latencies,
      "device_io": MEMORY (null without the flag) and
      "idle_cpu_pct_of_one_core" (a number with --idle-ms in EXTRA, else null).
  cli_check.py optimize --loom L --workdir W
      Builds a model whose Reshape target comes from a Shape -> Gather ->
      Unsqueeze -> Concat chain, runs `loom optimize --check` on it and checks
      the summary (the chain folds away), that outputs match, and that the
      saved model (with its external data file) passes onnx.checker and has no
      Shape node left (needs onnx and numpy; exits 77 = skipped without).
  cli_check.py save-names --loom L --workdir W
      `loom run --save-outputs` on outputs named like PyTorch's ("/layer/x"):
      one flat folder with '/' made '_'; two names sharing a file are an error
      (needs onnx; exits 77 = skipped without).
Exit 0 on success, 1 with a reason on stderr otherwise.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

SKIP = 77


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, timeout=120):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(f"timed out after {timeout}s: {' '.join(cmd)}")


def show(p):
    return f"exit {p.returncode}\n--- stdout ---\n{p.stdout}--- stderr ---\n{p.stderr}"


def check_one_line_failure(p, prefix, must_mention):
    if p.returncode != 1:
        fail(f"expected exit 1, got:\n{show(p)}")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if len(lines) != 1:
        fail(f"expected exactly one line on stderr, got {len(lines)}:\n{show(p)}")
    if not lines[0].startswith(prefix):
        fail(f"stderr line does not start with '{prefix}':\n{show(p)}")
    for m in must_mention:
        if m not in lines[0]:
            fail(f"stderr line does not mention '{m}':\n{show(p)}")


def cmd_expect(args):
    p = run(args.cmd)
    if p.returncode != args.exit:
        fail(f"expected exit {args.exit}:\n{show(p)}")
    if args.stdout and not re.search(args.stdout, p.stdout, re.M):
        fail(f"stdout does not match /{args.stdout}/:\n{show(p)}")
    if args.stderr and not re.search(args.stderr, p.stderr, re.M):
        fail(f"stderr does not match /{args.stderr}/:\n{show(p)}")
    if args.one_line and len([l for l in p.stderr.splitlines() if l.strip()]) != 1:
        fail(f"expected exactly one line on stderr:\n{show(p)}")
    if args.quiet_stdout and p.stdout:
        fail(f"expected nothing on stdout:\n{show(p)}")


def cmd_bad_model(args):
    os.makedirs(args.workdir, exist_ok=True)
    data = open(args.source, "rb").read()
    if args.kind == "truncated":
        path = os.path.join(args.workdir, "truncated.onnx")
        open(path, "wb").write(data[: len(data) // 2])
    elif args.kind == "not-onnx":
        path = os.path.join(args.workdir, "not_onnx.onnx")
        open(path, "wb").write(b"#!/bin/sh\necho this is a shell script, not an ONNX model\n")
    else:
        path = os.path.join(args.workdir, "does_not_exist.onnx")
        if os.path.exists(path):
            os.remove(path)
    p = run([args.loom, "run", "--model", path])
    check_one_line_failure(p, "loom run: ", [os.path.basename(path)])


def proto_class(type_proto):
    """The proto a .pb of `type_proto`'s kind holds (as numpy_helper writes it)."""
    import onnx
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return onnx.SequenceProto
    if kind == "optional_type":
        return onnx.OptionalProto
    return onnx.TensorProto


def saved_proto_name(path, type_proto):
    p = proto_class(type_proto)()
    p.ParseFromString(open(path, "rb").read())
    return p.name


def cmd_compare(args):
    try:
        import numpy  # noqa: F401
        from onnx import numpy_helper  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}", file=sys.stderr)
        sys.exit(SKIP)
    import onnx
    # The outside conformance harness owns reading values and comparing them.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
    from check_onnx_tests import compare, load_value

    model_path = os.path.join(args.case, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    init_names = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in init_names]
    data_set = sorted(glob.glob(os.path.join(args.case, "test_data_set_*")))[0]
    in_files = sorted(glob.glob(os.path.join(data_set, "input_*.pb")))
    out_files = sorted(glob.glob(os.path.join(data_set, "output_*.pb")))

    out_dir = os.path.join(args.workdir, "outputs")
    shutil.rmtree(out_dir, ignore_errors=True)  # --save-outputs must create it
    cmd = [args.loom, "run", "--model", model_path, "--save-outputs", out_dir, "--quiet"]
    for info, f in zip(inputs, in_files):
        cmd += ["--input", f"{info.name}={f}"]
    p = run(cmd)
    if p.returncode != 0:
        fail(f"loom run failed:\n{show(p)}")
    if p.stdout:
        fail(f"--quiet printed on stdout:\n{show(p)}")
    for info, f in zip(model.graph.output, out_files):
        expected = load_value(f, info.type)
        saved = os.path.join(out_dir, info.name + ".pb")
        if not os.path.exists(saved):
            fail(f"output '{info.name}' not saved at {saved}")
        saved_name = saved_proto_name(saved, info.type)
        if saved_name != info.name:
            fail(f"saved proto is named '{saved_name}', expected '{info.name}'")
        reason = compare(expected, load_value(saved, info.type), f"output '{info.name}'")
        if reason:
            fail(reason)
    print(f"{len(out_files)} output(s) match")


BENCH_NUMBERS = ("create_ms", "first_run_ms", "median_ms", "p90_ms", "min_ms", "mean_ms", "cpu_ms", "peak_rss_mb")


def cmd_bench_json(args):
    import json
    cmd = [args.loom, "bench", "--model", args.model, "--runs", "3", "--warmup", "1", "--json"]
    if args.device_io is not None:
        cmd += ["--device-io", args.device_io]
    extra = args.extra[1:] if args.extra and args.extra[0] == "--" else args.extra
    p = run(cmd + extra)
    if p.returncode != 0:
        fail(f"loom bench failed:\n{show(p)}")
    try:
        report = json.loads(p.stdout)
    except ValueError as e:
        fail(f"stdout is not one JSON object ({e}):\n{show(p)}")
    if not isinstance(report, dict):
        fail(f"stdout is JSON but not an object:\n{show(p)}")
    for key in BENCH_NUMBERS:
        v = report.get(key)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            fail(f"'{key}' is {v!r}, expected a non-negative number:\n{show(p)}")
    if not report["min_ms"] <= report["median_ms"] <= report["p90_ms"]:
        fail(f"expected min_ms <= median_ms <= p90_ms:\n{show(p)}")
    if report.get("runs") != 3 or report.get("warmup") != 1:
        fail(f"expected runs 3 and warmup 1:\n{show(p)}")
    if report.get("model") != args.model or not isinstance(report.get("providers"), list) or "threads" not in report:
        fail(f"expected model, providers (a list) and threads:\n{show(p)}")
    idle = report.get("idle_cpu_pct_of_one_core", "<missing>")
    if "--idle-ms" in extra:
        if not isinstance(idle, (int, float)) or isinstance(idle, bool) or idle < 0:
            fail(f"--idle-ms: expected idle_cpu_pct_of_one_core, a non-negative number, got {idle!r}:\n{show(p)}")
    elif idle is not None:
        fail(f"expected \"idle_cpu_pct_of_one_core\": null without --idle-ms, got {idle!r}:\n{show(p)}")
    if "device_io" not in report or report["device_io"] != args.device_io:
        fail(f"expected \"device_io\": {args.device_io!r}, got {report.get('device_io', '<missing>')!r}:\n{show(p)}")
    latencies = report.get("latencies_ms")
    if (not isinstance(latencies, list) or len(latencies) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in latencies)):
        fail(f"expected latencies_ms: 3 non-negative numbers, got {latencies!r}:\n{show(p)}")
    print(f"bench: median {report['median_ms']} ms, peak rss {report['peak_rss_mb']} MB, "
          f"device_io {report['device_io']}")


def shape_chain_model(path):
    """y = MatMul(Reshape(x, Concat(dims 0 and 1 of Shape(x), [2, -1])), w), x [batch, seq, 8]."""
    import numpy as np
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "i0"], ["g0"]),
        h.make_node("Gather", ["s", "i1"], ["g1"]),
        h.make_node("Unsqueeze", ["g0", "axes"], ["u0"]),
        h.make_node("Unsqueeze", ["g1", "axes"], ["u1"]),
        h.make_node("Concat", ["u0", "u1", "tail"], ["shape"], axis=0),
        h.make_node("Reshape", ["x", "shape"], ["r"]),
        h.make_node("MatMul", ["r", "w"], ["y"]),
    ]
    inits = [
        h.make_tensor("i0", T.INT64, [], [0]),
        h.make_tensor("i1", T.INT64, [], [1]),
        h.make_tensor("axes", T.INT64, [1], [0]),
        h.make_tensor("tail", T.INT64, [2], [2, -1]),
        # 4800 bytes: saved as external data with the default threshold
        numpy_helper.from_array(np.random.RandomState(0).randn(4, 300).astype(np.float32), "w"),
    ]
    graph = h.make_graph(nodes, "shape_chain", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 8])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", 2, 300])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def fresh_workdir_or_skip(workdir):
    """Skips (exit 77) without the onnx package; else empties `workdir`."""
    try:
        import onnx  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}", file=sys.stderr)
        sys.exit(SKIP)
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)


def cmd_save_names(args):
    """`loom run --save-outputs` with PyTorch-style output names ("/layer/Relu_output_0"): one flat
    folder with '/' made '_', and two names that map to one file are an error, not an overwrite."""
    fresh_workdir_or_skip(args.workdir)
    import onnx
    from onnx import helper, TensorProto

    def model(path, outputs):
        nodes = [helper.make_node("Identity", ["x"], [o]) for o in outputs]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2]) for o in outputs])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)

    ok = os.path.join(args.workdir, "slash.onnx")
    model(ok, ["/layer/Relu_output_0", "plain"])
    out = os.path.join(args.workdir, "out")
    p = run([args.loom, "run", "--model", ok, "--save-outputs", out, "--quiet"])
    if p.returncode != 0:
        fail(f"loom run --save-outputs refused a '/' name:\n{show(p)}")
    if sorted(os.listdir(out)) != ["_layer_Relu_output_0.pb", "plain.pb"]:
        fail(f"expected _layer_Relu_output_0.pb and plain.pb in {out}, got {sorted(os.listdir(out))}")
    clash = os.path.join(args.workdir, "clash.onnx")
    model(clash, ["a/b", "a_b"])
    p = run([args.loom, "run", "--model", clash, "--save-outputs", os.path.join(args.workdir, "out2"), "--quiet"])
    if p.returncode != 1 or "would both be saved as" not in p.stderr:
        fail(f"expected exit 1 naming the shared file:\n{show(p)}")


def cmd_optimize(args):
    try:
        import numpy  # noqa: F401
        import onnx
    except ImportError as e:
        print(f"skipped: {e}", file=sys.stderr)
        sys.exit(SKIP)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(os.path.join(args.workdir, "out"))
    model = os.path.join(args.workdir, "shape_chain.onnx")
    out = os.path.join(args.workdir, "out", "shape_chain_opt.onnx")
    shape_chain_model(model)
    p = run([args.loom, "optimize", "--model", model, "--out", out, "--check", "--dim", "batch=2", "--dim", "seq=3",
             "--seed", "5"])
    if p.returncode != 0:
        fail(f"loom optimize --check failed:\n{show(p)}")
    for pattern in (r"^nodes 8 -> 2$", r"^  Shape 1 -> 0$", r"^  Gather 2 -> 0$", r"^  Concat 1 -> 0$",
                    r"^output y: max abs diff \S+, max rel diff \S+ ok$", r"^check passed"):
        if not re.search(pattern, p.stdout, re.M):
            fail(f"stdout does not match /{pattern}/:\n{show(p)}")
    if not os.path.exists(out + ".data"):
        fail(f"no external data file {out}.data:\n{show(p)}")
    try:
        onnx.checker.check_model(out, full_check=True)
    except Exception as e:  # noqa: BLE001 - any checker failure is a test failure
        fail(f"onnx.checker refuses {out}: {e}")
    saved = onnx.load(out)
    ops = sorted(n.op_type for n in saved.graph.node)
    if ops != ["MatMul", "Reshape"]:
        fail(f"expected MatMul and Reshape in the saved model, got {ops}")
    if saved.producer_name != "loom":
        fail(f"producer is '{saved.producer_name}', expected 'loom'")
    print(f"optimized model {out} passes onnx.checker: {ops}")


def cmd_random_mask(args):
    """Random integer inputs: 0..9, but 0 or 1 for one named like a mask."""
    try:
        import numpy as np
        import onnx
        from onnx import TensorProto as T, helper as h, numpy_helper
    except ImportError as e:
        print(f"skipped: {e}", file=sys.stderr)
        sys.exit(SKIP)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    graph = h.make_graph(
        [h.make_node("Identity", ["attention_mask"], ["m"]), h.make_node("Identity", ["input_ids"], ["i"])], "masks",
        [h.make_tensor_value_info("attention_mask", T.INT64, [1, 64]),
         h.make_tensor_value_info("input_ids", T.INT64, [1, 64])],
        [h.make_tensor_value_info("m", T.INT64, [1, 64]), h.make_tensor_value_info("i", T.INT64, [1, 64])])
    model = os.path.join(args.workdir, "masks.onnx")
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 14)]), model)
    out = os.path.join(args.workdir, "out")
    p = run([args.loom, "run", "--model", model, "--save-outputs", out, "--quiet"])
    if p.returncode != 0:
        fail(f"loom run failed:\n{show(p)}")
    def values(name):
        t = onnx.TensorProto()
        with open(os.path.join(out, name + ".pb"), "rb") as f:
            t.ParseFromString(f.read())
        return set(numpy_helper.to_array(t).flatten().tolist())
    if values("m") != {0, 1}:
        fail(f"attention_mask values {sorted(values('m'))}, expected 0 and 1")
    if not values("i") - {0, 1}:
        fail(f"input_ids values {sorted(values('i'))}, expected more than 0 and 1")
    print("random mask input holds 0 and 1; other integers 0..9")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    e = sub.add_parser("expect")
    e.add_argument("--exit", type=int, required=True)
    e.add_argument("--stdout")
    e.add_argument("--stderr")
    e.add_argument("--one-line", action="store_true")
    e.add_argument("--quiet-stdout", action="store_true")
    e.add_argument("cmd", nargs=argparse.REMAINDER)
    b = sub.add_parser("bad-model")
    b.add_argument("--loom", required=True)
    b.add_argument("--kind", choices=["truncated", "not-onnx", "missing"], required=True)
    b.add_argument("--from", dest="source", required=True)
    b.add_argument("--workdir", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--loom", required=True)
    c.add_argument("--case", required=True)
    c.add_argument("--workdir", required=True)
    j = sub.add_parser("bench-json")
    j.add_argument("--loom", required=True)
    j.add_argument("--model", required=True)
    j.add_argument("--device-io", dest="device_io")
    j.add_argument("extra", nargs=argparse.REMAINDER)
    rm = sub.add_parser("random-mask")
    rm.add_argument("--loom", required=True)
    rm.add_argument("--workdir", required=True)
    sn = sub.add_parser("save-names")
    sn.add_argument("--loom", required=True)
    sn.add_argument("--workdir", required=True)
    o = sub.add_parser("optimize")
    o.add_argument("--loom", required=True)
    o.add_argument("--workdir", required=True)
    args = ap.parse_args()
    if args.mode == "expect":
        if args.cmd and args.cmd[0] == "--":
            args.cmd = args.cmd[1:]
        if not args.cmd:
            ap.error("expect needs a command after --")
        cmd_expect(args)
    elif args.mode == "bench-json":
        cmd_bench_json(args)
    elif args.mode == "optimize":
        cmd_optimize(args)
    elif args.mode == "save-names":
        cmd_save_names(args)
    elif args.mode == "random-mask":
        cmd_random_mask(args)
    elif args.mode == "bad-model":
        cmd_bad_model(args)
    else:
        cmd_compare(args)


if __name__ == "__main__":
    main()
