"""One model on Loom (cpu_onednn first, and the reference EP alone) and on ONNX Runtime, side by side:
outputs compared first, then alternating timing rounds at 1 and 2 threads, reported as a Markdown
table with the machine (bench/machine.py) and the other load on it while timing. Used by the
benchmarks that write their own models (dynamic_quant_benchmark.py, recurrent_benchmark.py)."""
import json, os, statistics, subprocess, sys

import numpy as np, onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402


def add_arguments(ap, rounds, runs, reference_runs, work_prefix):
    """The options every side-by-side benchmark takes, with its own defaults."""
    import tempfile
    ap.add_argument("--loom", default="build/bin/loom")
    ap.add_argument("--ort-dir", default="build/models")
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--runs", type=int, default=runs, help="timed runs per round (Loom cpu_onednn and ORT)")
    ap.add_argument("--reference-runs", type=int, default=reference_runs,
                    help="timed runs of the reference EP (slow), one round")
    ap.add_argument("--work", default=tempfile.mkdtemp(prefix=work_prefix))
    ap.add_argument("--out", help="also write the Markdown report here")


def last_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compare(loom, ort_dir, model, in_name, x_path, out_name, work, rounds, runs, reference_runs):
    """Returns (max abs differences, Loom's nodes per provider, rows of (threads, reference EP ms,
    Loom ms, ORT ms), other load while timing)."""
    loom_cmd = lambda providers, *rest: [loom, *rest, "--model", model, "--input", f"{in_name}={x_path}",
                                         "--providers", providers]
    ort_js = lambda script: ["node", script, "--model", model, "--input", f"{in_name}={x_path}", "--ort-dir", ort_dir]
    # Outputs first: every runtime must compute the same thing.
    outs = {}
    for key, providers in (("loom", "cpu_onednn,reference"), ("reference", "reference")):
        d = os.path.join(work, key)
        subprocess.run(loom_cmd(providers, "run", "--save-outputs", d, "--quiet"), check=True)
        outs[key] = read_pb(os.path.join(d, out_name.replace("/", "_") + ".pb"))
    d = os.path.join(work, "ort")
    subprocess.run(ort_js(os.path.join(HERE, "..", "tests", "models", "ort_run.js")) + ["--save-outputs", d],
                   check=True, capture_output=True)
    outs["ort"] = read_pb(os.path.join(d, out_name.replace("/", "_") + ".pb"))
    diff = {f"{p} vs {q}": float(np.abs(outs[p] - outs[q]).max())
            for p, q in (("loom", "reference"), ("loom", "ort"), ("reference", "ort"))}
    # Nodes per provider after Loom's passes (`loom partition` prints one "name [op] -> provider: ..." line each).
    placed = {}
    for line in subprocess.run([loom, "partition", "--model", model, "--providers", "cpu_onednn,reference"],
                               capture_output=True, text=True).stdout.splitlines():
        if "] -> " in line:
            provider = line.split("] -> ", 1)[1].split(":", 1)[0]
            placed[provider] = placed.get(provider, 0) + 1
    meter = machine.LoadMeter()
    meter.start()
    rows = []
    for threads in (1, 2):
        t = ["--threads", str(threads)]
        ref = last_json(loom_cmd("reference", "bench", *t, "--runs", str(reference_runs), "--warmup", "1",
                                 "--json"))["median_ms"]
        loom_ms, ort_ms = [], []
        for _ in range(rounds):
            loom_ms.append(last_json(loom_cmd("cpu_onednn,reference", "bench", *t, "--runs", str(runs), "--json"))
                           ["median_ms"])
            ort_ms.append(last_json(ort_js(os.path.join(HERE, "ort_bench.js")) + [*t, "--runs", str(runs)])
                          ["median_ms"])
        rows.append((threads, ref, statistics.median(loom_ms), statistics.median(ort_ms)))
    return diff, placed, rows, meter.stop()


def compare_and_report(a, title, what, script, model, in_name, x_path, out_name):
    """compare() then report() with the options of add_arguments (`a`); prints the report and writes it
    to a.out when given."""
    diff, placed, rows, load = compare(a.loom, a.ort_dir, model, in_name, x_path, out_name, a.work, a.rounds, a.runs,
                                       a.reference_runs)
    text = report(title, what, script, diff, placed, rows, load, a.rounds, a.runs, a.reference_runs)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


def report(title, what, script, diff, placed, rows, load, rounds, runs, reference_runs):
    m = machine.describe(os.path.join(HERE, ".."))
    lines = [f"# {title}", "", f"Model: {what} (bench/{script}).", "",
             "Machine: " + "; ".join(f"{k} {v}" for k, v in m.items()), "",
             "Max abs output difference: " + ", ".join(f"{k} {v:.3g}" for k, v in diff.items()), "",
             "| threads | reference EP ms | Loom cpu_onednn ms | ORT ms | reference / cpu_onednn | Loom / ORT |",
             "|---|---|---|---|---|---|"]
    for threads, ref, loom, ort in rows:
        lines.append(f"| {threads} | {ref:.1f} | {loom:.2f} | {ort:.2f} | {ref / loom:.1f}x | {loom / ort:.2f} |")
    lines += ["", f"Medians of {rounds} alternating rounds of {runs} timed runs each (the reference EP: "
              f"one round of {reference_runs}).", "",
              "Loom's nodes by provider (after its graph passes): " + ", ".join(f"{k} {v}" for k, v in placed.items()),
              "", "Other work on the machine while timing: " + ", ".join(f"{k} {v}" for k, v in load.items())]
    return "\n".join(lines) + "\n"
