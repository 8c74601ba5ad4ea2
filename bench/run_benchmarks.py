#!/usr/bin/python3
"""Times Loom and ONNX Runtime side by side on the same machine, inputs and threads.

Usage: run_benchmarks.py [--loom build/bin/loom] [--models a,b] [--threads 1,2]
                         [--rounds 9] [--runs R] [--warmup 2] [--providers a,b]
                         [--out bench/results] [--work bench/work] [--seed 0]

For each model and thread count: writes one set of random inputs (fixed seed,
made by tests/models/compare_with_ort.py's make_inputs) as TensorProto files;
runs both runtimes once with them and compares the outputs (rtol 1e-3, atol
1e-4, compare_with_ort.py's compare); then, for --rounds rounds, runs
`loom bench --json` and `node bench/ort_bench.js` once each, alternating which
goes first, every process measuring in-process after its warm-up (process start
is not timed). Writes OUT/<date>-<host>.md (machine, method, table) and .json
(the same plus every per-process result) and prints the table.

Models (see bench_models.py) are made in WORK/models by the model tests'
scripts on first use (torch export; npm registry for PP-OCR and
onnxruntime-node). --runs overrides every model's default timed-run count.
Exits 0 when every row was timed and its outputs agreed, 1 otherwise, 2 on bad
usage.
"""
import argparse
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "models"))
import compare_with_ort as cwo  # noqa: E402  (make_inputs, compare, load_output, last_line)

import bench_models  # noqa: E402
import machine  # noqa: E402
import report  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4


def log(msg):
    print(msg, flush=True)


class RuntimeFailed(Exception):
    pass


def run(cmd, timeout):
    """Runs cmd; returns its stdout. Raises RuntimeFailed with stderr's last line."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeFailed(f"timed out after {timeout}s: {shlex.join(cmd)}")
    except OSError as e:
        raise RuntimeFailed(f"cannot start {cmd[0]}: {e}")
    if p.returncode != 0:
        raise RuntimeFailed(f"exit {p.returncode}: {cwo.last_line(p.stderr)}")
    return p.stdout


def bench_json(cmd, timeout):
    out = run(cmd, timeout).strip().splitlines()
    try:
        return json.loads(out[-1])
    except (IndexError, ValueError):
        raise RuntimeFailed(f"no JSON on stdout: {shlex.join(cmd)}")


def write_inputs(model, model_path, folder, seed):
    """The model's inputs as TensorProto files; returns NAME=PATH arguments."""
    feeds = cwo.make_inputs(onnx.load(model_path, load_external_data=False), model.dims, seed, 100,
                            model.text_images)
    os.makedirs(folder, exist_ok=True)
    args = []
    for i, (name, value) in enumerate(feeds.items()):
        path = os.path.join(folder, f"input_{i}.pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
        args += ["--input", f"{name}={path}"]
    return args, ", ".join(f"{n} {v.dtype}{list(v.shape)}" for n, v in feeds.items())


def check_outputs(ctx, model_path, input_args, threads, work):
    """Runs both runtimes once and compares every output; returns {"ok", "detail"}."""
    ort_out, loom_out = os.path.join(work, "ort"), os.path.join(work, "loom")
    for d in (ort_out, loom_out):  # never compare a previous run's files
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    config = os.path.join(work, "loom_config.json")
    with open(config, "w") as f:
        json.dump({"threads": {"intra_op": threads}}, f)
    try:
        run([ctx.node, os.path.join(REPO, "tests", "models", "ort_run.js"), "--model", model_path, *input_args,
             "--save-outputs", ort_out, "--ort-dir", ctx.ort_dir, "--threads", str(threads)], ctx.timeout)
    except RuntimeFailed as e:
        return {"ok": False, "detail": f"ONNX Runtime failed: {e}"}
    try:
        run([ctx.loom, "run", "--model", model_path, *input_args, "--save-outputs", loom_out, "--quiet",
             "--config", config, *ctx.provider_args], ctx.timeout)
    except RuntimeFailed as e:
        return {"ok": False, "detail": f"loom run failed: {e}"}
    names = [o.name for o in onnx.load(model_path, load_external_data=False).graph.output]
    bad = []
    for name in names:
        expected, actual = cwo.load_output(ort_out, name), cwo.load_output(loom_out, name)
        if expected is None or actual is None:
            bad.append(f"{name} not written")
        elif not cwo.compare(name, expected, actual, RTOL, ATOL):
            bad.append(name)
    return {"ok": not bad, "detail": "differ: " + ", ".join(bad) if bad else f"{len(names)} output(s) agree"}


def time_row(ctx, model, model_path, input_args, threads, runs):
    """--rounds rounds of one Loom and one ORT process each, alternating who goes first."""
    loom_cmd = [ctx.loom, "bench", "--json", "--model", model_path, *input_args, "--threads", str(threads),
                "--runs", str(runs), "--warmup", str(ctx.warmup), *ctx.provider_args]
    ort_cmd = [ctx.node, os.path.join(HERE, "ort_bench.js"), "--model", model_path, *input_args,
               "--threads", str(threads), "--runs", str(runs), "--warmup", str(ctx.warmup), "--ort-dir", ctx.ort_dir]
    results = {"loom": [], "ort": []}
    for round_index in range(ctx.rounds):
        order = [("loom", loom_cmd), ("ort", ort_cmd)]
        if round_index % 2:
            order.reverse()
        for name, cmd in order:
            r = bench_json(cmd, ctx.timeout)
            results[name].append(r)
            log(f"    round {round_index + 1} {name:4}: median {r['median_ms']:.2f} ms, "
                f"create {r['create_ms']:.0f} ms, rss {r['peak_rss_mb']:.0f} MB")
    return results["loom"], results["ort"]


def node_baseline_rss(ctx):
    """Peak RSS (MB) of Node with onnxruntime-node loaded and no session."""
    script = ("const p=require('path'),fs=require('fs');"
              "require(require.resolve('onnxruntime-node',{paths:[p.resolve(process.argv[1])]}));"
              "console.log(/^VmHWM:\\s*(\\d+)/m.exec(fs.readFileSync('/proc/self/status','utf8'))[1]/1024)")
    try:
        return float(run([ctx.node, "-e", script, ctx.ort_dir], 60).strip())
    except (RuntimeFailed, ValueError):
        return None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--loom", default=os.path.join(REPO, "build", "bin", "loom"), help="the loom executable")
    p.add_argument("--models", default=",".join(m.name for m in bench_models.MODELS),
                   help="comma list (default: all of " + ", ".join(bench_models.BY_NAME) + ")")
    p.add_argument("--threads", default="1,2", help="comma list of intra-op thread counts (default 1,2)")
    # 9: on a shared VM a runtime's per-process medians swing 1.3-1.9x for
    # tenths of a second at a time; 5 rounds moved MobileNetV2's ratio by
    # up to 0.1 between runs of the same build.
    p.add_argument("--rounds", type=int, default=9, help="alternating rounds per model and thread count (default 9)")
    p.add_argument("--runs", type=int, help="timed runs per process (default: per model, 5 to 20)")
    p.add_argument("--warmup", type=int, default=2, help="warm-up runs per process (default 2)")
    p.add_argument("--providers", help="Loom providers in priority order (default: loom's, every available one)")
    p.add_argument("--out", default=os.path.join(HERE, "results"), help="results folder (default bench/results)")
    p.add_argument("--work", default=os.path.join(HERE, "work"), help="scratch folder: models, inputs, outputs")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--node", default=os.environ.get("LOOM_NODE", "node"))
    p.add_argument("--timeout", type=int, default=900, help="seconds per process (default 900)")
    args = p.parse_args()
    args.model_list = [m for m in args.models.split(",") if m]
    unknown = [m for m in args.model_list if m not in bench_models.BY_NAME]
    if unknown:
        p.error(f"unknown model(s) {', '.join(unknown)} (known: {', '.join(bench_models.BY_NAME)})")
    try:
        args.thread_list = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        p.error(f"--threads wants a comma list of integers, got {args.threads!r}")
    if not args.thread_list or min(args.thread_list) < 1:
        p.error("--threads: every count must be >= 1")
    if args.rounds < 1 or (args.runs is not None and args.runs < 1) or args.warmup < 0:
        p.error("--rounds and --runs must be >= 1, --warmup >= 0")
    if not (os.path.isfile(args.loom) and os.access(args.loom, os.X_OK)):
        p.error(f"loom executable {args.loom} not found (build it, or pass --loom)")
    args.loom = os.path.abspath(args.loom)
    args.provider_args = ["--providers", args.providers] if args.providers else []
    return args


def main():
    ctx = parse_args()
    started = datetime.datetime.now()
    models_dir = os.path.join(os.path.abspath(ctx.work), "models")
    ctx.ort_dir = models_dir
    models = [bench_models.BY_NAME[n] for n in ctx.model_list]
    log(f"preparing models in {models_dir} ...")
    try:
        bench_models.prepare_models(models, models_dir)
    except RuntimeError as e:
        print(f"run_benchmarks: {e}", file=sys.stderr)
        return 1

    described = machine.describe(REPO)  # the commit as the run starts
    meter = machine.LoadMeter()
    meter.start()
    rows, all_ok, ort_version, used = [], True, None, set()
    for model in models:
        model_path = os.path.join(models_dir, model.file)
        runs = ctx.runs or model.runs
        work = os.path.join(os.path.abspath(ctx.work), "runs", model.name)
        input_args, shown = write_inputs(model, model_path, os.path.join(work, "inputs"), ctx.seed)
        log(f"{model.name}: {shown}")
        for threads in ctx.thread_list:
            log(f"  threads {threads}: checking outputs")
            check = check_outputs(ctx, model_path, input_args, threads, os.path.join(work, f"t{threads}"))
            log(f"  threads {threads}: outputs {'agree' if check['ok'] else 'DO NOT agree: ' + check['detail']}")
            loom_r, ort_r, note = [], [], ""
            try:
                loom_r, ort_r = time_row(ctx, model, model_path, input_args, threads, runs)
            except RuntimeFailed as e:
                note = f"timing failed: {e}"
                log(f"  threads {threads}: {note}")
            for r in loom_r:
                used.update(p for p, n in r.get("nodes_per_provider", {}).items() if n > 0)
            ort_version = ort_version or next((r.get("ort_version") for r in ort_r), None)
            row = report.make_row(model, threads, check, loom_r, ort_r, note)
            all_ok &= bool(check["ok"]) and not note
            rows.append(row)
            if row["latency_ratio"] is not None:
                log(f"  threads {threads}: Loom {row['loom']['median_ms']:.2f} ms, ORT {row['ort']['median_ms']:.2f} ms,"
                    f" ratio {row['latency_ratio']:.2f}")
    load = meter.stop()

    meta = {
        "date": started.strftime("%Y-%m-%d %H:%M"),
        "machine": described,
        "load": load,
        "loom": os.path.relpath(ctx.loom, REPO) if ctx.loom.startswith(REPO) else ctx.loom,
        "providers_asked": ctx.providers or "loom's default (every available provider, reference last)",
        "providers_used": ", ".join(sorted(used)) or "-",
        "ort_version": ort_version or "unknown",
        "node_version": run([ctx.node, "--version"], 60).strip(),
        "node_baseline_rss_mb": node_baseline_rss(ctx),
        "rounds": ctx.rounds,
        "warmup": ctx.warmup,
        "runs_desc": (f"{ctx.runs} per process" if ctx.runs else
                      "per process " + ", ".join(f"{m.name} {m.runs}" for m in models)),
        "seed": ctx.seed,
        "rtol": RTOL,
        "atol": ATOL,
        "command": shlex.join(sys.argv),
    }
    os.makedirs(ctx.out, exist_ok=True)
    stem = os.path.join(ctx.out, f"{started.strftime('%Y-%m-%d')}-{meta['machine']['host']}")
    report.write(stem + ".md", stem + ".json", meta, rows)
    log("\n" + report.table(rows))
    log(f"\nwrote {stem}.md and {stem}.json in {time.strftime('%M:%S', time.gmtime(load['wall_s']))} (min:s)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
