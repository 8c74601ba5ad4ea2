#!/usr/bin/python3
"""Load test of `loom serve` on 127.0.0.1: throughput and latency with and
without dynamic batching, at several client concurrencies.

  bench/serve_load.py --loom build/bin/loom --model build/models/resnet50.onnx \
      [--concurrency 1,4,16,64] [--duration 10] [--warmup 4] [--max-batch 16] \
      [--delay-us 20000] [--out bench/results/X.md]

The model's dim 0 of every input and output is made symbolic (a copy in a
temporary repository), then served twice by one server: `single`
(max_batch_size set, no dynamic batching: each request runs alone, one at a
time) and `batched` (dynamic batching up to --max-batch rows within
--delay-us). For each mode and concurrency C, C client threads send
back-to-back requests (binary tensor data, keep-alive connections) for
--warmup seconds (not counted: kernels for new batch sizes get built), then
for --duration seconds; requests finished in that window count. Everything
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
    cmd = [loom, "serve", "--model-repository", repo, "--http-port", "0", "--metrics-port", "0", "--host", "127.0.0.1"]
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


def make_body(inputs, rng):
    header, blobs = {"inputs": []}, []
    for name, elem, dims in inputs:
        np_type, dt = DTYPES[elem]
        a = (rng.standard_normal(dims) if np_type == np.float32 else rng.integers(0, 10, dims)).astype(np_type)
        header["inputs"].append({"name": name, "datatype": dt, "shape": dims, "parameters": {"binary_data_size": a.nbytes}})
        blobs.append(a.tobytes())
    header["parameters"] = {"binary_data_output": True}
    head = json.dumps(header).encode()
    return head + b"".join(blobs), {"Inference-Header-Content-Length": str(len(head)),
                                   "Content-Type": "application/octet-stream"}


def run_level(url, body, headers, concurrency, warmup, duration):
    """Latencies (s) of requests finished inside the window, and errors."""
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
                if t0 >= t_start and t1 <= t_end:
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
    ap.add_argument("--delay-us", type=int, default=20000)
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--modes", default="single,batched")
    ap.add_argument("--out")
    a = ap.parse_args()
    levels = [int(c) for c in a.concurrency.split(",")]
    if max(levels) > 256 or a.duration > 120:
        sys.exit("bounded by design: concurrency <= 256, duration <= 120 s")
    name = os.path.splitext(os.path.basename(a.model))[0]
    repo = tempfile.mkdtemp(prefix="serve_load_")
    try:
        inputs = batch_free_copy(a.model, os.path.join(repo, "batched", "1", "model.onnx"))
        os.makedirs(os.path.join(repo, "single", "1"))
        os.link(os.path.join(repo, "batched", "1", "model.onnx"), os.path.join(repo, "single", "1", "model.onnx"))
        common = {"max_batch_size": a.max_batch, "instance_count": a.instances, "max_queue_size": 1024,
                  "request_timeout_ms": 120000}
        with open(os.path.join(repo, "single", "config.json"), "w") as f:
            json.dump(common, f)
        with open(os.path.join(repo, "batched", "config.json"), "w") as f:
            json.dump(dict(common, dynamic_batching={"max_queue_delay_us": a.delay_us}), f)
        body, headers = make_body(inputs, np.random.default_rng(0))
        proc, http = start_server(a.loom, repo)
        rows = []
        try:
            for mode in a.modes.split(","):
                url = f"{http}/v2/models/{mode}/infer"
                requests.post(url, data=body, headers=headers, timeout=300).raise_for_status()
                for c in levels:
                    busy0, total0 = machine._busy_and_total_seconds()
                    cpu0 = proc_cpu_seconds(proc.pid)
                    lat, errors = run_level(url, body, headers, c, a.warmup, a.duration)
                    busy, total = machine._busy_and_total_seconds()
                    server_cpu = proc_cpu_seconds(proc.pid) - cpu0
                    lat_ms = np.array(lat) * 1000
                    row = {"mode": mode, "concurrency": c, "requests": len(lat), "errors": errors,
                           "throughput_rps": len(lat) / a.duration,
                           "p50_ms": float(np.percentile(lat_ms, 50)) if len(lat) else None,
                           "p99_ms": float(np.percentile(lat_ms, 99)) if len(lat) else None,
                           "server_cpu_share": server_cpu / max(total - total0, 1e-9),
                           "machine_busy_share": (busy - busy0) / max(total - total0, 1e-9)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
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
        s = next((r for r in rows if r["mode"] == "single" and r["concurrency"] == c), None)
        b = next((r for r in rows if r["mode"] == "batched" and r["concurrency"] == c), None)
        if s and b and s["throughput_rps"]:
            ratios.append(f"concurrency {c}: batched / single throughput {b['throughput_rps'] / s['throughput_rps']:.2f}x")
    text = "\n".join(table) + "\n\n" + "\n".join(ratios) + "\n"
    print(text)
    if a.out:
        info = machine.describe(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        with open(a.out, "w") as f:
            f.write(f"# `loom serve` load test: {name}\n\n")
            f.write(f"`bench/serve_load.py --model {name}.onnx --concurrency {a.concurrency} --duration {a.duration:g} "
                    f"--warmup {a.warmup:g} --max-batch {a.max_batch} --delay-us {a.delay_us} --instances {a.instances}`\n\n")
            f.write("Machine: " + ", ".join(f"{k} {v}" for k, v in info.items()) + "\n\n")
            f.write(text)
            f.write("\n```json\n" + json.dumps(rows, indent=1) + "\n```\n")


if __name__ == "__main__":
    main()
