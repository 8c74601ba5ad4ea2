#!/usr/bin/env python3
"""Latency added by profiling: `loom bench` with and without --profile.

Times a model (default: MobileNetV2 from bench/work/models, made by
run_benchmarks.py) at one intra-op thread with profiling off and on,
alternating, several rounds, and writes the medians and the on/off ratio to
bench/results/<date>-profile-overhead.md. Issue 7 asks for at most 5 % added
latency on MobileNetV2 at 1 thread.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def bench(loom, model, threads, runs, profile, providers):
    cmd = [loom, "bench", "--model", model, "--threads", str(threads), "--runs", str(runs), "--warmup", "5", "--json"]
    if providers:
        cmd += ["--providers", providers]
    if profile:
        cmd += ["--profile", profile]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", default="build/bin/loom")
    ap.add_argument("--model", default=os.path.join(HERE, "work", "models", "mobilenetv2.onnx"))
    ap.add_argument("--providers", default="", help="Loom's EPs (default: every available provider)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    if not os.path.exists(args.model):
        sys.exit(f"{args.model} not found: run bench/run_benchmarks.py once to make the models")
    trace = os.path.join(tempfile.mkdtemp(prefix="loom-profile-"), "trace.json")
    medians = {"off": [], "on": []}
    for r in range(args.rounds):
        for mode in ("off", "on"):
            res = bench(args.loom, args.model, args.threads, args.runs, trace if mode == "on" else None, args.providers)
            medians[mode].append(res["median_ms"])
            print(f"round {r + 1} profiling {mode:3s}: median {res['median_ms']:.3f} ms", flush=True)
    off, on = statistics.median(medians["off"]), statistics.median(medians["on"])
    ratio = on / off
    with open(trace) as f:
        events = len(json.load(f)["traceEvents"])
    date = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    report = os.path.join(args.out, f"{date}-profile-overhead.md")
    m = machine.describe(os.path.dirname(HERE))
    with open(report, "w") as f:
        f.write(f"# Profiling overhead ({date})\n\n")
        f.write(f"Machine: {m['cpu']}, {m['usable_cpus']} usable CPUs, {m['memory_gib']} GiB, {m['os']}; "
                f"loom commit {m['loom_commit']}\n\n")
        f.write(f"Model: `{os.path.basename(args.model)}`, {args.threads} intra-op thread(s), providers "
                f"{args.providers or 'default'}. `bench/profile_overhead.py`: {args.rounds} alternating rounds of "
                f"`loom bench --runs {args.runs}` with and without `--profile`; median of the per-round medians. "
                f"The last profiled process recorded {events} trace events.\n\n")
        f.write("| profiling | median latency (ms) | per-round medians |\n|---|---|---|\n")
        for mode in ("off", "on"):
            f.write(f"| {mode} | {statistics.median(medians[mode]):.3f} | "
                    f"{', '.join(f'{v:.3f}' for v in medians[mode])} |\n")
        f.write(f"\non / off latency: **{ratio:.3f}** (target <= 1.05)\n")
    print(f"on / off = {ratio:.3f}; wrote {report}")


if __name__ == "__main__":
    main()
