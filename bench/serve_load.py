#!/usr/bin/python3
"""Load test of `loom serve` on 127.0.0.1: throughput and latency with and
without dynamic batching, at several client concurrencies.

  bench/serve_load.py --loom build/bin/loom --model build/models/resnet50.onnx \
      [--concurrency 1,4,16,64] [--duration 10] [--warmup 4] [--max-batch 16] \
      [--delay-us 20000] [--rounds 2] [--out bench/results/X.md]

The model's dim 0 of every input and output is made symbolic (a copy in a
temporary repository), then served by one server under several configs
(MODES below): `single` (no dynamic batching: each request runs alone, one
at a time) and `batched` (dynamic batching up to --max-batch rows within
--delay-us), and both with two one-thread instances. For each mode and
concurrency C, C client threads send
back-to-back requests (binary tensor data, keep-alive connections; the
server first ran each batch size once, so kernels are built) for
--warmup seconds (not counted), then
for --duration seconds; requests that finish in that window count. The modes
alternate at each concurrency, --rounds times, and the rounds are pooled. Everything
stops by itself: the window is fixed, each request has a timeout, and the
server is stopped with SIGTERM (SIGKILL after 30 s). Loopback only.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402

DTYPES = {onnx.TensorProto.FLOAT: (np.float32, "FP32"), onnx.TensorProto.INT64: (np.int64, "INT64"),
          onnx.TensorProto.INT32: (np.int32, "INT32")}


def _config(a, batching, max_batch, instances, intra_op):
    c = {"max_batch_size": max_batch, "instance_count": instances, "max_queue_size": 1024,
         "request_timeout_ms": 120000, "session": {"threads": {"intra_op": intra_op}}}
    if batching:
        c["dynamic_batching"] = {"max_queue_delay_us": a.delay_us}
    return c


# Each mode is one model of the repository (the same file) with its config.
# `single` is one-request-at-a-time serving, the baseline; `batched` differs
# from it only in dynamic batching. The *_2x1 modes run two instances of one
# thread each (intra_op 1), on this 2-core machine the better use of both
# cores: with batching (up to --max-batch / 2 rows each) and without (two
# requests at a time), so the table separates what batching and what
# instances bring.
MODES = {
    "single": lambda a: _config(a, False, a.max_batch, 1, 0),
    "batched": lambda a: _config(a, True, a.max_batch, 1, 0),
    "single_2x1": lambda a: _config(a, False, a.max_batch, 2, 1),
    "batched_2x1": lambda a: _config(a, True, max(1, a.max_batch // 2), 2, 1),
}


def batch_free_copy(src, dst):
    """The model with dim 0 of its inputs and outputs named 'N' (shape
    inference in the session works the rest out again)."""
    m = onnx.load(src)
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "N"
    del m.graph.value_info[:]
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    onnx.save(m, dst)
    inputs = []
    init = {i.name for i in m.graph.initializer}
    for v in m.graph.input:
        if v.name in init:
            continue
        dims = [d.dim_value or 1 for d in v.type.tensor_type.shape.dim]
        dims[0] = 1
        inputs.append((v.name, v.type.tensor_type.elem_type, dims))
    return inputs


def start_server(loom, repo):
    cmd = [loom, "serve", "--model-repository", repo, "--http-port", "0", "--metrics-port", "0", "--grpc-port", "-1",
           "--host", "127.0.0.1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    http = None
    deadline = time.time() + 300
    while http is None and time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server exited: " + proc.stderr.read())
        m = re.match(r"loom serve: HTTP on (\S+)", line)
        if m:
            http = "http://" + m.group(1)
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    return proc, http


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def make_body(inputs, rng, rows=1):
    header, blobs = {"inputs": []}, []
    for name, elem, dims in inputs:
        dims = [rows] + dims[1:]
        np_type, dt = DTYPES[elem]
        a = (rng.standard_normal(dims) if np_type == np.float32 else rng.integers(0, 10, dims)).astype(np_type)
        header["inputs"].append({"name": name, "datatype": dt, "shape": dims, "parameters": {"binary_data_size": a.nbytes}})
        blobs.append(a.tobytes())
    header["parameters"] = {"binary_data_output": True}
    head = json.dumps(header).encode()
    return head + b"".join(blobs), {"Inference-Header-Content-Length": str(len(head)),
                                   "Content-Type": "application/octet-stream"}


def run_level(url, body, headers, concurrency, warmup, duration):
    """Latencies (s) of requests that finished inside the window, and errors."""
    t_start = time.time() + warmup
    t_end = t_start + duration
    lat, errors, lock = [], [0], threading.Lock()

    def client():
        with requests.Session() as s:
            while time.time() < t_end:
                t0 = time.time()
                try:
                    r = s.post(url, data=body, headers=headers, timeout=120)
                    ok = r.status_code == 200
                except requests.RequestException:
                    ok = False
                t1 = time.time()
                # Completions inside the window count, whenever they started:
                # counting only requests that also started inside it would
                # drop about latency / duration of them at high concurrency.
                if t_start <= t1 <= t_end:
                    with lock:
                        if ok:
                            lat.append(t1 - t0)
                        else:
                            errors[0] += 1

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, errors[0]


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loom", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--concurrency", default="1,4,16,64")
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=4)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--delay-us", type=int, default=50000)
    ap.add_argument("--modes", default="single,batched,single_2x1,batched_2x1")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    a = ap.parse_args()
    levels = [int(c) for c in a.concurrency.split(",")]
    if max(levels) > 256 or a.duration > 120 or a.rounds > 10:
        sys.exit("bounded by design: concurrency <= 256, duration <= 120 s, rounds <= 10")
    name = os.path.splitext(os.path.basename(a.model))[0]
    repo = tempfile.mkdtemp(prefix="serve_load_")
    try:
        inputs = batch_free_copy(a.model, os.path.join(repo, "batched", "1", "model.onnx"))
        modes = a.modes.split(",")
        for mode in modes:
            if mode not in MODES:
                sys.exit(f"unknown mode {mode} (modes: {', '.join(MODES)})")
            if mode != "batched":
                os.makedirs(os.path.join(repo, mode, "1"))
                os.link(os.path.join(repo, "batched", "1", "model.onnx"), os.path.join(repo, mode, "1", "model.onnx"))
            with open(os.path.join(repo, mode, "config.json"), "w") as f:
                json.dump(MODES[mode](a), f)
        body, headers = make_body(inputs, np.random.default_rng(0))
        proc, http = start_server(a.loom, repo)
        rows = []
        try:
            # A warm server: the first run with each batch size builds its
            # kernels and memory plan, which no steady state pays again.
            for mode in modes:
                for n in range(1, MODES[mode](a)["max_batch_size"] + 1) if "batched" in mode else [1]:
                    b, h = make_body(inputs, np.random.default_rng(n), n)
                    requests.post(f"{http}/v2/models/{mode}/infer", data=b, headers=h, timeout=300).raise_for_status()
            # Modes alternate within each level, --rounds times, so load from
            # other processes on the machine falls on both alike.
            for c in levels:
                for mode in modes:
                    rows.append({"mode": mode, "concurrency": c, "lat": [], "errors": 0, "server_cpu": 0.0,
                                 "busy": 0.0, "total": 0.0})
                for _ in range(a.rounds):
                    for mode in modes:
                        row = next(r for r in rows if r["mode"] == mode and r["concurrency"] == c)
                        busy0, total0 = machine._busy_and_total_seconds()
                        cpu0 = proc_cpu_seconds(proc.pid)
                        lat, errors = run_level(f"{http}/v2/models/{mode}/infer", body, headers, c, a.warmup, a.duration)
                        busy, total = machine._busy_and_total_seconds()
                        row["server_cpu"] += proc_cpu_seconds(proc.pid) - cpu0
                        row["busy"] += busy - busy0
                        row["total"] += total - total0
                        row["lat"] += lat
                        row["errors"] += errors
                        print(f"{mode} concurrency {c}: {len(lat)} requests in {a.duration:g} s", flush=True)
            for row in rows:
                lat_ms = np.array(row.pop("lat")) * 1000
                row.update({"requests": len(lat_ms), "throughput_rps": len(lat_ms) / (a.duration * a.rounds),
                            "p50_ms": float(np.percentile(lat_ms, 50)) if len(lat_ms) else None,
                            "p99_ms": float(np.percentile(lat_ms, 99)) if len(lat_ms) else None,
                            "server_cpu_share": row.pop("server_cpu") / max(row["total"], 1e-9),
                            "machine_busy_share": row.pop("busy") / max(row.pop("total"), 1e-9)})
        finally:
            stop_server(proc)
    finally:
        shutil.rmtree(repo, ignore_errors=True)

    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    table = ["| mode | concurrency | requests | errors | throughput (req/s) | p50 (ms) | p99 (ms) | server CPU | machine busy |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {r['mode']} | {r['concurrency']} | {r['requests']} | {r['errors']} | {r['throughput_rps']:.2f} | "
                     f"{fmt(r['p50_ms'])} | {fmt(r['p99_ms'])} | {r['server_cpu_share']:.0%} | {r['machine_busy_share']:.0%} |")
    ratios = []
    for c in levels:
        base = next((r for r in rows if r["mode"] == "single" and r["concurrency"] == c), None)
        for r in rows:
            if base and r["concurrency"] == c and r["mode"] != "single" and base["throughput_rps"]:
                ratios.append(f"concurrency {c}: {r['mode']} / single throughput "
                              f"{r['throughput_rps'] / base['throughput_rps']:.2f}x")
    text = "\n".join(table) + "\n\n" + "\n".join(ratios) + "\n"
    print(text)
    if a.out:
        info = machine.describe(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        with open(a.out, "w") as f:
            f.write(f"# `loom serve` load test: {name}\n\n")
            f.write(f"`bench/serve_load.py --model {name}.onnx --concurrency {a.concurrency} --duration {a.duration:g} "
                    f"--warmup {a.warmup:g} --rounds {a.rounds} --max-batch {a.max_batch} --delay-us {a.delay_us} --modes {a.modes}`\n\n")
            f.write("Machine: " + ", ".join(f"{k} {v}" for k, v in info.items()) + "\n\n")
            f.write(text)
            f.write("\n```json\n" + json.dumps(rows, indent=1) + "\n```\n")


if __name__ == "__main__":
    main()
