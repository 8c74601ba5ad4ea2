#!/usr/bin/python3
"""Int8 (QDQ) models: Loom's own float32, Loom's int8 and ONNX Runtime's int8, side by side.

Usage: quantization_benchmark.py [--loom build/bin/loom] [--models resnet50,mobilenetv2]
                                 [--threads 1,2] [--rounds 5] [--runs R] [--warmup 2]
                                 [--calibration 32] [--held-out 500] [--method minmax]
                                 [--out bench/results] [--work bench/work]

For each model (torchvision ResNet-50 and MobileNetV2, built as for
run_benchmarks.py, then trained from scratch on the generated images'
ten-class task by bench/trained_classifiers.py to about 99 % held-out
accuracy, so that top-1 answers mean something):
1. Generated images (bench/generated_images.py): a calibration set and a
   held-out set drawn from different seeds.
2. `loom calibrate` on the calibration set (--method, default minmax: ORT's
   quantize_static default), `loom quantize --per-channel` to M_int8.onnx
   (QDQ format, uint8 activations, symmetric int8 weights).
3. Accuracy: `loom compare --json` of the int8 model against the float model on
   the held-out set, both on Loom's default providers: per-output max / mean
   absolute error, SNR and top-1 agreement.
4. Same outputs: on one held-out image, Loom's and ONNX Runtime's int8 outputs
   are compared (SNR of their difference, same top-1) -- both run the same
   QDQ model, but each fuses it its own way, so they agree to rounding, not bit
   for bit.
5. Latency: --rounds rounds of `loom bench` on the float model, `loom bench` on
   the int8 model, `bench/ort_bench.js` on the int8 model and on the float
   model, each a fresh process, rotating which goes first; medians over all
   timed runs of all rounds.
Writes OUT/<date>-<host>-quantization.md and .json and prints the table.
Targets (issue 11): int8 <= 0.5x Loom's float32 at 1 thread, Loom int8 <= 0.8x
ONNX Runtime int8, top-1 agreement >= 99 % (ResNet-50, per-channel weights).
Exits 0 when every step ran, 1 otherwise (a missed target is reported, not an
error), 2 on bad usage.
"""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_models  # noqa: E402
import generated_images  # noqa: E402
import machine  # noqa: E402
import report  # noqa: E402
from run_benchmarks import RuntimeFailed, bench_json, log, node_baseline_rss, run  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "models"))
import compare_with_ort as cwo  # noqa: E402  (load_output)

SPEED_VS_FLOAT_TARGET = 0.5  # int8 / Loom float32, at 1 thread
SPEED_VS_ORT_TARGET = 0.8  # Loom int8 / ORT int8
TOP1_TARGET = 0.99  # ResNet-50, per-channel weights
MODELS = ("resnet50", "mobilenetv2")
VARIANTS = ("loom_fp32", "loom_int8", "ort_int8", "ort_fp32")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--loom", default=os.path.join(REPO, "build", "bin", "loom"))
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--threads", default="1,2", help="comma list of intra-op thread counts (default 1,2)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, help="timed runs per process (default: per model, as run_benchmarks.py)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--calibration", type=int, default=32, help="calibration images (default 32)")
    p.add_argument("--held-out", type=int, default=500, help="held-out images for accuracy (default 500)")
    p.add_argument("--method", default="minmax", help="loom calibrate --method (default minmax)")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--work", default=os.path.join(HERE, "work"))
    p.add_argument("--node", default=os.environ.get("LOOM_NODE", "node"))
    p.add_argument("--timeout", type=int, default=1800, help="seconds per process (default 1800)")
    a = p.parse_args()
    a.model_list = [m for m in a.models.split(",") if m]
    bad = [m for m in a.model_list if m not in MODELS]
    if bad:
        p.error(f"unknown model(s) {', '.join(bad)} (known: {', '.join(MODELS)})")
    try:
        a.thread_list = [int(t) for t in a.threads.split(",") if t]
    except ValueError:
        p.error(f"--threads wants a comma list of integers, got {a.threads!r}")
    if not a.thread_list or min(a.thread_list) < 1 or a.rounds < 1 or a.warmup < 0 or \
            a.calibration < 1 or a.held_out < 1 or (a.runs is not None and a.runs < 1):
        p.error("--threads, --rounds, --runs, --calibration and --held-out must be >= 1, --warmup >= 0")
    if not (os.path.isfile(a.loom) and os.access(a.loom, os.X_OK)):
        p.error(f"loom executable {a.loom} not found (build it, or pass --loom)")
    a.loom = os.path.abspath(a.loom)
    a.work = os.path.abspath(a.work)
    return a


def quantize(ctx, model_path, calib_dir, work):
    """Calibrates and quantizes; returns (int8 model path, quantize's report line, seconds)."""
    ranges = os.path.join(work, "ranges.json")
    int8 = os.path.join(work, os.path.basename(model_path).replace(".onnx", "_int8.onnx"))
    start = time.monotonic()
    run([ctx.loom, "calibrate", "--model", model_path, "--data", calib_dir, "--method", ctx.method,
         "--out", ranges], ctx.timeout)
    calibrate_s = time.monotonic() - start
    out = run([ctx.loom, "quantize", "--model", model_path, "--ranges", ranges, "--out", int8, "--per-channel"],
              ctx.timeout)
    summary = next((l.strip() for l in out.splitlines() if l.strip()), "")
    return int8, summary, calibrate_s


def accuracy(ctx, int8, model_path, held_out_dir):
    out = run([ctx.loom, "compare", "--model", int8, "--reference", model_path, "--data", held_out_dir, "--json"],
              ctx.timeout)
    return json.loads(out.strip().splitlines()[-1])


def snr_db(reference, other):
    noise = np.sum((reference.astype(np.float64) - other) ** 2)
    signal = np.sum(reference.astype(np.float64) ** 2)
    return float("inf") if noise == 0 else float(10 * np.log10(signal / noise))


def same_outputs(ctx, int8, input_args, work):
    """Loom's and ORT's int8 outputs on one input: SNR of the difference, same top-1."""
    loom_out, ort_out = os.path.join(work, "loom_int8_out"), os.path.join(work, "ort_int8_out")
    run([ctx.loom, "run", "--model", int8, *input_args, "--save-outputs", loom_out, "--quiet"], ctx.timeout)
    run([ctx.node, os.path.join(REPO, "tests", "models", "ort_run.js"), "--model", int8, *input_args,
         "--save-outputs", ort_out, "--ort-dir", ctx.ort_dir], ctx.timeout)
    result = []
    for o in onnx.load(int8, load_external_data=False).graph.output:
        a, b = cwo.load_output(ort_out, o.name), cwo.load_output(loom_out, o.name)
        if a is None or b is None:
            result.append({"name": o.name, "ok": False, "detail": "not written"})
            continue
        a, b = numpy_helper.to_array(a), numpy_helper.to_array(b)
        same_top1 = bool(np.argmax(a.reshape(a.shape[0], -1), 1).tolist() == np.argmax(b.reshape(b.shape[0], -1), 1).tolist())
        result.append({"name": o.name, "snr_db": round(snr_db(a, b), 2), "same_top1": same_top1,
                       "max_abs_diff": float(np.max(np.abs(a.astype(np.float64) - b))),
                       "ok": same_top1})
    return result


def time_variants(ctx, paths, input_args, threads, runs):
    cmds = {
        "loom_fp32": [ctx.loom, "bench", "--json", "--model", paths["fp32"]],
        "loom_int8": [ctx.loom, "bench", "--json", "--model", paths["int8"]],
        "ort_int8": [ctx.node, os.path.join(HERE, "ort_bench.js"), "--model", paths["int8"], "--ort-dir", ctx.ort_dir],
        "ort_fp32": [ctx.node, os.path.join(HERE, "ort_bench.js"), "--model", paths["fp32"], "--ort-dir", ctx.ort_dir],
    }
    common = [*input_args, "--threads", str(threads), "--runs", str(runs), "--warmup", str(ctx.warmup)]
    results = {v: [] for v in VARIANTS}
    for r in range(ctx.rounds):
        order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
        for v in order:
            res = bench_json(cmds[v] + common, ctx.timeout)
            results[v].append(res)
            log(f"    round {r + 1} {v:9}: median {res['median_ms']:.2f} ms")
    return {v: report.summarize_runtime(p) for v, p in results.items()}


def ratio(a, b):
    return round(a["median_ms"] / b["median_ms"], 3) if a and b and b["median_ms"] > 0 else None


def judged(r, target):
    return "-" if r is None else f"{r:.2f} {'met' if r <= target else 'missed'} (<= {target:g})"


def markdown(meta, rows):
    m, load = meta["machine"], meta["load"]
    out = [f"# Int8 (QDQ) models: Loom float32, Loom int8, ONNX Runtime int8 -- {meta['date']} on {m['host']}", "",
           f"- CPU: {m['cpu']}; {m['logical_cpus']} logical CPUs ({m['usable_cpus']} usable); {m['memory_gib']} GiB memory",
           f"- OS: {m['os']}",
           f"- Loom: commit {m['loom_commit']}; `{meta['loom']}`, default providers. ONNX Runtime: onnxruntime-node "
           f"{meta['ort_version']} (CPU EP, graph optimisation `all`); Node {meta['node_version']}.",
           f"- Models: torchvision float32 architectures built as the main benchmark's, trained from scratch "
           f"on the generated images' ten-class task to about 99 % held-out accuracy (bench/trained_classifiers.py: "
           f"no pretrained weights can be downloaded here, and random weights give near-flat logits whose top-1 "
           f"means nothing); int8 = `loom calibrate --method {meta['method']}` on "
           f"{meta['calibration']} generated images (bench/generated_images.py, seed 1), then `loom quantize "
           f"--per-channel` (QDQ, uint8 activations, symmetric int8 weights per output channel). ONNX Runtime runs "
           f"the same int8 file.",
           f"- Accuracy: `loom compare` of int8 vs float32 on {meta['held_out']} held-out generated images (seed 2).",
           f"- Latency: {meta['rounds']} rounds, each timing the four variants in fresh processes, rotating which "
           f"goes first ({meta['warmup']} warm-up runs, then {meta['runs_desc']} timed runs per process); "
           f"medians over all timed runs; the input is held-out image 0.",
           f"- Machine load: {load['wall_s']} s; other processes used {100 * load['other_share']:.0f} % of the CPU "
           f"time; load average {load['load_average_start']} at start, {load['load_average_end']} at end.",
           "",
           "| model | threads | Loom fp32 ms | Loom int8 ms | ORT int8 ms | ORT fp32 ms | Loom int8 / Loom fp32 "
           "| Loom int8 / ORT int8 | top-1 agreement | SNR dB | Loom vs ORT int8 outputs |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t = r["timing"]
        ms = lambda v: "-" if not t.get(v) else f"{t[v]['median_ms']:.2f}"
        acc = r["accuracy"]["outputs"][0]
        same = r["same_outputs"][0]
        vs_float = judged(r["int8_vs_fp32"], SPEED_VS_FLOAT_TARGET) if r["threads"] == 1 else \
            ("-" if r["int8_vs_fp32"] is None else f"{r['int8_vs_fp32']:.2f}")
        top1 = f"{100 * acc['top1_agreement']:.1f} %"
        if r["model"] == "resnet50":
            top1 += " met" if acc["top1_agreement"] >= TOP1_TARGET else " missed"
            top1 += f" (>= {100 * TOP1_TARGET:g} %)"
        lines = [f"| {r['model']}", str(r["threads"]), ms("loom_fp32"), ms("loom_int8"), ms("ort_int8"), ms("ort_fp32"),
                 vs_float, judged(r["int8_vs_ort"], SPEED_VS_ORT_TARGET), top1, f"{acc['snr_db']:.1f}",
                 f"SNR {same.get('snr_db', '-')} dB, same top-1: {'yes' if same.get('same_top1') else 'NO'}"]
        out.append(" | ".join(lines) + " |")
    out += ["", "Quantization: " + "; ".join(f"{r['model']}: {r['quantize_summary']} (calibration "
                                             f"{r['calibrate_s']:.0f} s)" for r in rows if r["threads"] == rows[0]["threads"]),
            "", f"Command: `{meta['command']}`"]
    return "\n".join(out) + "\n"


def main():
    ctx = parse_args()
    started = datetime.datetime.now()
    models_dir = os.path.join(ctx.work, "models")
    ctx.ort_dir = models_dir
    log(f"preparing models in {models_dir} ...")
    try:
        bench_models.prepare_models([bench_models.BY_NAME[n] for n in ctx.model_list], models_dir)
    except RuntimeError as e:
        print(f"quantization_benchmark: {e}", file=sys.stderr)
        return 1
    trained = subprocess.run([sys.executable, os.path.join(HERE, "trained_classifiers.py"), models_dir,
                              "--only", *ctx.model_list], capture_output=True, text=True)
    if trained.returncode != 0:
        print(f"quantization_benchmark: trained_classifiers.py failed: {trained.stderr.strip()[-500:]}",
              file=sys.stderr)
        return 1
    for line in trained.stdout.splitlines():
        if "held-out accuracy" in line or "skipped" in line:
            log(line)
    qwork = os.path.join(ctx.work, "quantization")
    calib = generated_images.write_set(os.path.join(qwork, "images", "calibration"), ctx.calibration, seed=1)
    held_out = generated_images.write_set(os.path.join(qwork, "images", "held_out"), ctx.held_out, seed=2)
    described = machine.describe(REPO)
    meter = machine.LoadMeter()
    meter.start()
    rows, ok, ort_version = [], True, None
    for name in ctx.model_list:
        model = bench_models.BY_NAME[name]
        fp32 = os.path.join(models_dir, f"{name}_trained.onnx")
        work = os.path.join(qwork, name)
        os.makedirs(work, exist_ok=True)
        try:
            log(f"{name}: calibrating on {ctx.calibration} images and quantizing ...")
            int8, summary, calibrate_s = quantize(ctx, fp32, calib, work)
            log(f"  {summary}")
            log(f"{name}: accuracy on {ctx.held_out} held-out images ...")
            acc = accuracy(ctx, int8, fp32, held_out)
            log(f"  {json.dumps(acc['outputs'])}")
            input_name = onnx.load(fp32, load_external_data=False).graph.input[0].name
            tensor = os.path.join(work, "input_0.pb")
            with open(tensor, "wb") as f:
                f.write(numpy_helper.from_array(np.load(os.path.join(held_out, "000.npy")), input_name)
                        .SerializeToString())
            input_args = ["--input", f"{input_name}={tensor}"]
            same = same_outputs(ctx, int8, input_args, work)
            log(f"  Loom vs ORT int8: {json.dumps(same)}")
        except RuntimeFailed as e:
            log(f"{name}: {e}")
            ok = False
            continue
        for threads in ctx.thread_list:
            log(f"  threads {threads}: timing")
            try:
                timing = time_variants(ctx, {"fp32": fp32, "int8": int8}, input_args, threads, ctx.runs or model.runs)
            except RuntimeFailed as e:
                log(f"  threads {threads}: timing failed: {e}")
                ok = False
                continue
            rows.append({"model": name, "threads": threads, "quantize_summary": summary,
                         "calibrate_s": round(calibrate_s, 1), "accuracy": acc, "same_outputs": same,
                         "timing": timing, "int8_vs_fp32": ratio(timing["loom_int8"], timing["loom_fp32"]),
                         "int8_vs_ort": ratio(timing["loom_int8"], timing["ort_int8"])})
            log(f"  threads {threads}: int8/fp32 {rows[-1]['int8_vs_fp32']}, Loom/ORT int8 {rows[-1]['int8_vs_ort']}")
    load = meter.stop()
    try:
        ort_version = json.loads(run([ctx.node, "-e", "const p=require('path');console.log(JSON.stringify(require("
                                      "require.resolve('onnxruntime-node/package.json',{paths:[p.resolve(process.argv[1])]})"
                                      ").version))", models_dir], 60))
    except (RuntimeFailed, ValueError):
        ort_version = "unknown"
    meta = {"date": started.strftime("%Y-%m-%d %H:%M"), "machine": described, "load": load,
            "loom": os.path.relpath(ctx.loom, REPO) if ctx.loom.startswith(REPO) else ctx.loom,
            "ort_version": ort_version, "node_version": run([ctx.node, "--version"], 60).strip(),
            "node_baseline_rss_mb": node_baseline_rss(ctx), "method": ctx.method,
            "calibration": ctx.calibration, "held_out": ctx.held_out, "rounds": ctx.rounds, "warmup": ctx.warmup,
            "runs_desc": str(ctx.runs) if ctx.runs else ", ".join(f"{n} {bench_models.BY_NAME[n].runs}"
                                                                   for n in ctx.model_list),
            "command": shlex.join(sys.argv)}
    os.makedirs(ctx.out, exist_ok=True)
    stem = os.path.join(ctx.out, f"{started.strftime('%Y-%m-%d')}-{described['host']}-quantization")
    text = markdown(meta, rows)
    with open(stem + ".md", "w") as f:
        f.write(text)
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
        f.write("\n")
    log("\n" + text)
    log(f"wrote {stem}.md and .json")
    return 0 if ok and rows else 1


if __name__ == "__main__":
    sys.exit(main())
