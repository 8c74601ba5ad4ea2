"""Turns the per-process bench results into the Loom / ONNX Runtime table.

Latency figures pool every timed run of every round (median, p90, min over
all of them); create time, CPU time per run and peak RSS are medians of the
per-process values. Ratios are Loom / ONNX Runtime: below 1 means Loom is
faster or smaller.
"""
import json
import statistics

# Issue 4's targets for the ratio of medians, by model and thread count.
LATENCY_TARGETS = {
    ("mobilenetv2", 1): 0.85, ("mobilenetv2", 2): 0.85,
    ("ppocr_det", 1): 0.85, ("ppocr_det", 2): 0.85,
    ("ppocr_rec", 1): 0.85, ("ppocr_rec", 2): 0.85,
    ("resnet50", 1): 1.0, ("resnet50", 2): 0.95,
    ("bert_base", 1): 1.0, ("bert_base", 2): 1.0,
}
CREATE_TARGET = 1.0
# Issue 30: time to the first result (session creation plus the first run,
# which pays for whatever a runtime defers to it) no longer than ORT's.
FIRST_RESULT_TARGET = 1.0
RSS_TARGET = 1.1


def _pct(values, q):
    """Nearest-rank percentile, as `loom bench` and ort_bench.js compute p90."""
    s = sorted(values)
    return s[max(0, -(-len(s) * q // 100) - 1)]


def summarize_runtime(processes):
    """One runtime's numbers for one model and thread count, from its bench JSONs."""
    if not processes:
        return None
    latencies = [ms for p in processes for ms in p["latencies_ms"]]
    return {
        "processes": len(processes),
        "timed_runs": len(latencies),
        "median_ms": round(statistics.median(latencies), 3),
        "p90_ms": round(_pct(latencies, 90), 3),
        "min_ms": round(min(latencies), 3),
        "create_ms": round(statistics.median(p["create_ms"] for p in processes), 2),
        "first_result_ms": round(statistics.median(p["create_ms"] + p["first_run_ms"] for p in processes), 2),
        "cpu_ms": round(statistics.median(p["cpu_ms"] for p in processes), 3),
        "peak_rss_mb": round(statistics.median(p["peak_rss_mb"] for p in processes), 1),
        "per_process_median_ms": [p["median_ms"] for p in processes],
    }


def ratio(loom, ort, key):
    if not loom or not ort or not ort[key]:
        return None
    return round(loom[key] / ort[key], 3)


# Per-process medians further apart than this mean the machine was not steady.
NOISY_SPREAD = 1.3


def spread_note(name, summary):
    if not summary or len(summary["per_process_median_ms"]) < 2:
        return ""
    lo, hi = min(summary["per_process_median_ms"]), max(summary["per_process_median_ms"])
    if lo <= 0 or hi / lo <= NOISY_SPREAD:
        return ""
    return f"{name}'s per-process medians ranged {lo:.2f}-{hi:.2f} ms (x{hi / lo:.1f}): noisy"


def make_row(model, threads, check, loom_processes, ort_processes, note=""):
    loom, ort = summarize_runtime(loom_processes), summarize_runtime(ort_processes)
    note = "; ".join(n for n in (note, spread_note("Loom", loom), spread_note("ORT", ort)) if n)
    return {
        "model": model.name,
        "input": model.shape,
        "threads": threads,
        "outputs_checked": check,
        "loom": loom,
        "ort": ort,
        "latency_ratio": ratio(loom, ort, "median_ms"),
        "latency_target": LATENCY_TARGETS.get((model.name, threads)),
        "create_ratio": ratio(loom, ort, "create_ms"),
        "first_result_ratio": ratio(loom, ort, "first_result_ms"),
        "rss_ratio": ratio(loom, ort, "peak_rss_mb"),
        "cpu_ratio": ratio(loom, ort, "cpu_ms"),
        "note": note,
    }


def _num(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def _judged(r, target):
    if r is None:
        return "-"
    if target is None:
        return f"{r:.2f}"
    return f"{r:.2f} {'met' if r <= target else 'missed'} (<= {target:g})"


def _pair(row, key, digits=1):
    loom, ort = row["loom"], row["ort"]
    return f"{_num(loom and loom[key], digits)} / {_num(ort and ort[key], digits)}"


def table(rows):
    head = ("| model | threads | Loom median ms | ORT median ms | Loom/ORT | create ms Loom / ORT | ratio "
            "| create + first run ms Loom / ORT | ratio "
            "| peak RSS MB Loom / ORT | ratio | CPU ms/run Loom / ORT | outputs checked |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        check = r["outputs_checked"]
        lines.append(" | ".join([
            f"| {r['model']}", str(r["threads"]),
            _num(r["loom"] and r["loom"]["median_ms"], 2), _num(r["ort"] and r["ort"]["median_ms"], 2),
            _judged(r["latency_ratio"], r["latency_target"]),
            _pair(r, "create_ms"), _judged(r["create_ratio"], CREATE_TARGET),
            _pair(r, "first_result_ms"), _judged(r.get("first_result_ratio"), FIRST_RESULT_TARGET),
            _pair(r, "peak_rss_mb"), _judged(r["rss_ratio"], RSS_TARGET),
            _pair(r, "cpu_ms", 2),
            ("yes" if check["ok"] else "NO: " + check["detail"]) if check["ok"] is not None else "not run",
        ]) + " |")
    return "\n".join(lines)


def markdown(meta, rows):
    m, load = meta["machine"], meta["load"]
    out = [f"# Loom vs ONNX Runtime, {meta['date']} on {m['host']}", ""]
    out += [
        f"- CPU: {m['cpu']}; {m['logical_cpus']} logical CPUs ({m['usable_cpus']} usable); "
        f"{m['memory_gib']} GiB memory",
        f"- OS: {m['os']}",
        f"- Loom: commit {m['loom_commit']}; `{meta['loom']}`; providers asked: {meta['providers_asked']}; "
        f"providers that ran nodes: {meta['providers_used']}",
        f"- ONNX Runtime: onnxruntime-node {meta['ort_version']} (CPU EP, graph optimisation `all`, "
        f"intra-op threads = threads, inter-op 1, sequential, ORT's default spinning); Node {meta['node_version']}",
        f"- Method: per model and thread count, {meta['rounds']} rounds alternating the runtime that goes first; "
        f"each round runs `loom bench --json` and `bench/ort_bench.js` once each in a fresh process "
        f"({meta['warmup']} warm-up runs, then the timed runs: {meta['runs_desc']}). Same input files for both "
        f"(seed {meta['seed']}); outputs compared first (rtol {meta['rtol']:g}, atol {meta['atol']:g}).",
        f"- Latency: median over all timed runs of all rounds. Create, create + first run (the first warm-up "
        f"run: time to the first result), CPU and RSS: median over the processes. "
        f"ORT's peak RSS includes Node.js with onnxruntime-node loaded ({_num(meta['node_baseline_rss_mb'])} MB "
        f"before any session).",
        f"- Machine load: the benchmark took {load['wall_s']} s; other processes used {load['other_cpu_s']} "
        f"of {load['cpu_capacity_s']} CPU-seconds ({100 * load['other_share']:.0f} %); load average "
        f"{load['load_average_start']} at start, {load['load_average_end']} at end."
        + (" **Other work was running during the benchmark**: absolute times are inflated and noisier; the "
           "alternating rounds keep the ratios comparable." if load["other_share"] > 0.05 else ""),
        "",
        table(rows),
        "",
        "Ratios are Loom / ONNX Runtime (below 1: Loom faster or smaller); targets from issue 4 (time to the first "
        "result: issue 30).",
    ]
    notes = [f"- {r['model']} at {r['threads']} thread(s): {r['note']}" for r in rows if r["note"]]
    if notes:
        out += ["", "Notes:", *notes]
    return "\n".join(out) + "\n"


def write(path_md, path_json, meta, rows):
    with open(path_md, "w") as f:
        f.write(markdown(meta, rows))
    with open(path_json, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
        f.write("\n")
