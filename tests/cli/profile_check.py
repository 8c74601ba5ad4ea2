#!/usr/bin/python3
"""Checks of `loom profile summarize` / `loom profile timeline`, driven by ctest.

  profile_check.py summarize --loom L --trace T --case NAME [-- EXTRA FLAGS...]
      Runs `loom profile summarize T --json EXTRA...` and compares the JSON
      with the hand-computed expectations of CASE (below): every listed key
      must be present with that value (numbers within 1e-6).
  profile_check.py roundtrip --loom L --model M --trace T [--device] [-- LOOM RUN FLAGS...]
      `loom run --profile T` on M, then summarize --json (one run, plausible
      numbers, session phases, device spans with --device) and timeline.
  profile_check.py timeline --loom L --trace T --svg OUT --spans N --lanes A,B,C [--run K]
      Runs `loom profile timeline T --svg OUT [--run K]`, checks the printed
      line, that OUT parses as XML with an <svg> root, holds exactly N
      <rect class="span"> each with a <title>, no other <rect>, and the lane
      labels A, B, C in that order.
Exit 0 on success, 1 with a reason on stderr otherwise.

Expectations for tests/cli/data/profile_sample.json, by hand, in µs:
  run 1: run 10000+1200, executor 10100+1000; steps conv1 10150+200 (k150),
    copy 10350+50 (4096 B), gemm1 10400+50 (k20), fused_0 10450+500 (k400),
    wait 10950+50, barrier 11020+30; device copy 10360+60, gemm1 10450+250.
    span 11050-10150=900; union 850+30=880 -> gaps 120; kernel 570;
    outside 50+30+100=180; device busy 310, idle 340-310=30; launching on
    stream 1 50+50=100; host waits 50+30=80.
  run 2: run 12000+1600, executor 12100+1400; steps 12150+300 (k250),
    12450+50, 12500+200 (k100), 12700+750 (k600), 13450+20, 13480+10;
    device 12460+60, 12520+400. span 1340; union 1320+10 -> gaps 70;
    kernel 950; outside 300; device busy 460, idle 0; launching 50+200=250;
    host waits 20+10=30.
  op groups (step dur, both runs): fused 500+750, Conv 200+300, MatMul 50+200
    of 2000 -> 62.5 %, 25 %, 12.5 %; MatMul device 250+400.
  parts inside fused_0: "convolution: conv" 10460+300 and 12710+400 -> 700 of
    2000 = 35 % (run 2 alone: 400 of 1250 = 32 %).
"""
import argparse
import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET

SAMPLE_PHASES = {"load_ms": 2.0, "transform_ms": 3.0, "partition_ms": 0.5, "compile_ms": 1.5, "plan_ms": 1.0,
                 "pass_count": 2, "compile_count": 1}
RUN1 = {"run": 1, "tag": "r1", "steps": 6, "run_ms": 1.2, "executor_ms": 1.0, "before_executor_ms": 0.1,
        "after_executor_ms": 0.1, "node_span_ms": 0.9, "kernel_ms": 0.57, "in_nodes_outside_kernels_ms": 0.18,
        "gaps_between_nodes_ms": 0.12, "device_busy_ms": 0.31, "device_idle_gaps_ms": 0.03, "copy_count": 1,
        "copy_bytes": 4096, "copy_ms": 0.05, "launch_ms": 0.1, "host_wait_ms": 0.08}
RUN2 = {"run": 2, "tag": "r2", "steps": 6, "run_ms": 1.6, "executor_ms": 1.4, "before_executor_ms": 0.1,
        "after_executor_ms": 0.1, "node_span_ms": 1.34, "kernel_ms": 0.95, "in_nodes_outside_kernels_ms": 0.3,
        "gaps_between_nodes_ms": 0.07, "device_busy_ms": 0.46, "device_idle_gaps_ms": 0.0, "copy_count": 1,
        "copy_bytes": 4096, "copy_ms": 0.05, "launch_ms": 0.25, "host_wait_ms": 0.03}
MEAN = {"steps": 6, "run_ms": 1.4, "executor_ms": 1.2, "before_executor_ms": 0.1, "after_executor_ms": 0.1,
        "node_span_ms": 1.12, "kernel_ms": 0.76, "in_nodes_outside_kernels_ms": 0.24, "gaps_between_nodes_ms": 0.095,
        "device_busy_ms": 0.385, "device_idle_gaps_ms": 0.015, "copy_count": 1, "copy_bytes": 4096, "copy_ms": 0.05,
        "launch_ms": 0.175, "host_wait_ms": 0.055}
FUSED_ALL = {"op_type": "fused(Conv+Relu)", "ep": "cpu_onednn", "calls": 2, "total_ms": 1.25, "mean_ms": 0.625,
             "kernel_ms": 1.0, "percent_of_kernel_time": 62.5, "device_ms": 0.0}
CONV_ALL = {"op_type": "Conv", "ep": "cpu_onednn", "calls": 2, "total_ms": 0.5, "mean_ms": 0.25, "kernel_ms": 0.4,
            "percent_of_kernel_time": 25.0, "device_ms": 0.0}
MATMUL_ALL = {"op_type": "MatMul", "ep": "test_async", "calls": 2, "total_ms": 0.25, "mean_ms": 0.125,
              "kernel_ms": 0.12, "percent_of_kernel_time": 12.5, "device_ms": 0.65}
PARTS_ALL = {"op_type": "convolution", "ep": "cpu_onednn", "calls": 2, "total_ms": 0.7, "mean_ms": 0.35,
             "kernel_ms": 0.7, "percent_of_kernel_time": 35.0}
PASSES = [{"name": "constant_folding", "calls": 1, "total_ms": 1.5, "changed": 1},
          {"name": "fuse_conv_relu", "calls": 1, "total_ms": 1.0, "changed": 0}]

CASES = {
    # every run: per-run numbers, mean and median (equal for two runs), op types, EPs, phases
    "sample_all": {
        "loom_profile_version": 1, "model": "models/sample.onnx",
        "providers": ["cpu_onednn", "test_async", "reference"], "skipped_events": 0,
        "runs": [RUN1, RUN2],
        "aggregate": {"runs": 2, "mean": MEAN, "median": MEAN},
        "has_device": True, "op_groups": 3, "op_total_ms": 2.0,
        "ops": [FUSED_ALL, CONV_ALL, MATMUL_ALL],
        "parts": [PARTS_ALL],
        "eps": [{"ep": "cpu_onednn", "calls": 4, "total_ms": 1.75, "mean_ms": 0.4375, "kernel_ms": 1.4,
                 "percent_of_kernel_time": 87.5, "device_ms": 0.0},
                {"ep": "test_async", "calls": 2, "total_ms": 0.25, "mean_ms": 0.125, "kernel_ms": 0.12,
                 "percent_of_kernel_time": 12.5, "device_ms": 0.65}],
        "phases": dict(SAMPLE_PHASES, passes=PASSES,
                       compiles=[{"partition": "fused(Conv+Relu)", "ep": "cpu_onednn", "ms": 1.5}]),
    },
    # --run 2: that run alone, no aggregate, op shares of run 2 (750, 300, 200 of 1250)
    "sample_run2": {
        "runs": [RUN2], "aggregate": None, "op_groups": 3, "op_total_ms": 1.25,
        "ops": [dict(FUSED_ALL, calls=1, total_ms=0.75, mean_ms=0.75, kernel_ms=0.6, percent_of_kernel_time=60.0),
                dict(CONV_ALL, calls=1, total_ms=0.3, mean_ms=0.3, kernel_ms=0.25, percent_of_kernel_time=24.0),
                dict(MATMUL_ALL, calls=1, total_ms=0.2, mean_ms=0.2, kernel_ms=0.1, percent_of_kernel_time=16.0,
                     device_ms=0.4)],
        "parts": [dict(PARTS_ALL, calls=1, total_ms=0.4, mean_ms=0.4, kernel_ms=0.4, percent_of_kernel_time=32.0)],
    },
    # --top 1: one op type and one pass
    "sample_top1": {
        "op_groups": 3, "ops": [FUSED_ALL], "phases": dict(SAMPLE_PHASES, passes=PASSES[:1]),
    },
    # bad events skipped (a string, ts as a string, no pid, negative dur, thread_name without tid)
    "malformed": {
        "skipped_events": 5, "model": "", "providers": [], "has_device": False, "aggregate": None,
        "runs": [{"run": 1, "tag": "", "steps": 2, "run_ms": 1.0, "executor_ms": 0.8, "before_executor_ms": 0.1,
                  "after_executor_ms": 0.1, "node_span_ms": 0.4, "kernel_ms": 0.05,
                  "in_nodes_outside_kernels_ms": 0.25, "gaps_between_nodes_ms": 0.5, "device_busy_ms": None,
                  "device_idle_gaps_ms": None, "copy_count": 0, "copy_bytes": 0, "copy_ms": 0.0}],
        "op_groups": 2, "op_total_ms": 0.3,
        "phases": {"load_ms": None, "transform_ms": None, "plan_ms": None, "pass_count": 0, "passes": []},
    },
}


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        fail(f"timed out: {' '.join(cmd)}")


def show(p):
    return f"exit {p.returncode}\n--- stdout ---\n{p.stdout}--- stderr ---\n{p.stderr}"


def compare(expected, actual, where):
    """Reasons `actual` differs from `expected` (dict keys of expected only)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        out = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{where}.{k}: missing")
            else:
                out += compare(v, actual[k], f"{where}.{k}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {len(expected)} items, got {actual!r}"]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += compare(e, a, f"{where}[{i}]")
        return out
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return [] if actual == expected and type(actual) is type(expected) else [f"{where}: {actual!r} != {expected!r}"]
    if isinstance(actual, bool) or not isinstance(actual, (int, float)) or not math.isclose(
            actual, expected, rel_tol=0, abs_tol=1e-6):
        return [f"{where}: {actual!r} != {expected!r}"]
    return []


def cmd_summarize(args):
    p = run([args.loom, "profile", "summarize", args.trace, "--json"] + args.extra)
    if p.returncode != 0:
        fail(f"loom profile summarize failed:\n{show(p)}")
    try:
        report = json.loads(p.stdout)
    except ValueError as e:
        fail(f"stdout is not one JSON object ({e}):\n{show(p)}")
    problems = compare(CASES[args.case], report, "report")
    if problems:
        fail("\n".join(problems) + "\n" + show(p))
    print(f"{args.case}: {len(CASES[args.case])} top-level keys match")


def cmd_timeline(args):
    cmd = [args.loom, "profile", "timeline", args.trace, "--svg", args.svg]
    if args.run is not None:
        cmd += ["--run", args.run]
    p = run(cmd)
    if p.returncode != 0:
        fail(f"loom profile timeline failed:\n{show(p)}")
    lanes = args.lanes.split(",")
    if not p.stdout.startswith(f"wrote {args.svg}: ") or f" {args.spans} spans in {len(lanes)} lanes" not in p.stdout:
        fail(f"unexpected stdout:\n{show(p)}")
    try:
        root = ET.parse(args.svg).getroot()
    except ET.ParseError as e:
        fail(f"{args.svg} is not well-formed XML: {e}")
    ns = "{http://www.w3.org/2000/svg}"
    if root.tag != ns + "svg":
        fail(f"root element is {root.tag}, expected svg")
    rects = list(root.iter(ns + "rect"))
    spans = [r for r in rects if r.get("class") == "span"]
    if len(spans) != args.spans or len(rects) != len(spans):
        fail(f"{len(spans)} span rects ({len(rects)} rects in all), expected {args.spans}")
    for r in spans:
        title = r.find(ns + "title")
        if title is None or not (title.text or "").strip():
            fail(f"a span has no <title>: {ET.tostring(r)[:200]}")
        if float(r.get("width")) <= 0:
            fail(f"a span has no width: {ET.tostring(r)[:200]}")
    labels = [t.text for t in root.iter(ns + "text") if t.get("class") == "lane-label"]
    if labels != lanes:
        fail(f"lane labels {labels}, expected {lanes}")
    titles = " ".join(r.find(ns + "title").text for r in spans)
    for needle in ("op type: MatMul", "EP: test_async", "inputs: float[1,4,8,8]; float[8,8]", "duration: "):
        if needle not in titles:
            fail(f"no tooltip mentions '{needle}'")
    print(f"{args.svg}: {len(spans)} spans, lanes {labels}")


def cmd_roundtrip(args):
    """`loom run --profile` on a real model, then both readers on the trace."""
    run = [args.loom, "run", "--model", args.model, "--quiet", "--profile", args.trace] + args.extra
    p = subprocess.run(run, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"{' '.join(run)} exited {p.returncode}: {p.stderr.strip()}")
    p = subprocess.run([args.loom, "profile", "summarize", args.trace, "--json"], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        fail(f"summarize exited {p.returncode}: {p.stderr.strip()}")
    s = json.loads(p.stdout)
    if len(s["runs"]) != 1 or s["runs"][0]["steps"] < 1:
        fail(f"expected one run with steps, got {s['runs']}")
    r = s["runs"][0]
    if not (0 < r["executor_ms"] <= r["run_ms"]) or r["kernel_ms"] is None:
        fail(f"implausible run numbers {r}")
    for phase in ("load_ms", "transform_ms", "partition_ms", "plan_ms"):
        if not s["phases"].get(phase) and s["phases"].get(phase) != 0:
            fail(f"no {phase} in {s['phases']}")
    if args.device and not (s["has_device"] and r["device_busy_ms"] > 0 and r["copy_count"] >= 2):
        fail(f"expected device spans and copies, got has_device={s['has_device']} run={r}")
    svg = args.trace + ".svg"
    p = subprocess.run([args.loom, "profile", "timeline", args.trace, "--svg", svg], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        fail(f"timeline exited {p.returncode}: {p.stderr.strip()}")
    ET.parse(svg)
    print(f"{args.trace}: {r['steps']} steps, run {r['run_ms']:.3f} ms; {svg} written")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("summarize")
    s.add_argument("--loom", required=True)
    s.add_argument("--trace", required=True)
    s.add_argument("--case", choices=sorted(CASES), required=True)
    s.add_argument("extra", nargs=argparse.REMAINDER)
    t = sub.add_parser("timeline")
    t.add_argument("--loom", required=True)
    t.add_argument("--trace", required=True)
    t.add_argument("--svg", required=True)
    t.add_argument("--spans", type=int, required=True)
    t.add_argument("--lanes", required=True)
    t.add_argument("--run")
    rt = sub.add_parser("roundtrip")
    rt.add_argument("--loom", required=True)
    rt.add_argument("--model", required=True)
    rt.add_argument("--trace", required=True)
    rt.add_argument("--device", action="store_true", help="expect device spans and copies")
    rt.add_argument("extra", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.mode == "roundtrip":
        if args.extra and args.extra[0] == "--":
            args.extra = args.extra[1:]
        return cmd_roundtrip(args)
    if args.mode == "summarize":
        if args.extra and args.extra[0] == "--":
            args.extra = args.extra[1:]
        cmd_summarize(args)
    else:
        cmd_timeline(args)


if __name__ == "__main__":
    main()
