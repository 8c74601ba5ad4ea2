"""Shared pieces of the `loom serve` tests: small models built with onnx's
helpers, a model repository laid out as Triton's, and a server started on
127.0.0.1 with ephemeral ports (read from its startup lines) that is always
stopped, by SIGTERM then SIGKILL, when the test ends."""
import json
import os
import queue
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import onnx
import requests
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def save(model_graph, path):
    model = helper.make_model(model_graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)


MIX_W = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5.0) / 7.0


def mix_model(path):
    """x FP32 [N,4], k INT32 [N,4] -> y = x @ W FP32 [N,3], z = int64(k) + 1 INT64 [N,4]."""
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"]),
         helper.make_node("Cast", ["k"], ["k64"], to=TensorProto.INT64),
         helper.make_node("Add", ["k64", "one"], ["z"])],
        "mix",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("k", TensorProto.INT32, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("z", TensorProto.INT64, ["N", 4])],
        [numpy_helper.from_array(MIX_W, "W"), numpy_helper.from_array(np.array([1], np.int64), "one")])
    save(g, path)


def mix_expected(x, k):
    return (np.asarray(x, np.float32) @ MIX_W).astype(np.float32), np.asarray(k, np.int64) + 1


def types_model(path):
    """h FP16 [N,2] -> h_out (Identity); b BOOL [N,2] -> b_out (Not); s BYTES [N] -> s_out (Identity)."""
    g = helper.make_graph(
        [helper.make_node("Identity", ["h"], ["h_out"]),
         helper.make_node("Not", ["b"], ["b_out"]),
         helper.make_node("Identity", ["s"], ["s_out"])],
        "types",
        [helper.make_tensor_value_info("h", TensorProto.FLOAT16, ["N", 2]),
         helper.make_tensor_value_info("b", TensorProto.BOOL, ["N", 2]),
         helper.make_tensor_value_info("s", TensorProto.STRING, ["N"])],
        [helper.make_tensor_value_info("h_out", TensorProto.FLOAT16, ["N", 2]),
         helper.make_tensor_value_info("b_out", TensorProto.BOOL, ["N", 2]),
         helper.make_tensor_value_info("s_out", TensorProto.STRING, ["N"])])
    save(g, path)


def fixed_model(path, scale):
    """x FP32 [1,4] (fixed) -> y = x * scale."""
    g = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["y"])], "fixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.array([scale], np.float32), "s")])
    save(g, path)


def slow_model(path, size=1024):
    """x FP32 [N,1] -> y FP32 [N,1]: each row expands to a size x size matrix
    multiplied by a constant one, so a run takes tens of milliseconds."""
    g = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "ax"], ["x3"]),
         helper.make_node("Expand", ["x3", "shape3"], ["big"]),
         helper.make_node("ConstantOfShape", ["shape2"], ["W"],
                          value=numpy_helper.from_array(np.array([0.001], np.float32))),
         helper.make_node("MatMul", ["big", "W"], ["p"]),
         helper.make_node("ReduceMean", ["p"], ["y3"], axes=[1, 2], keepdims=0),
         helper.make_node("Unsqueeze", ["y3", "ax"], ["y"])],
        "slow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])],
        [numpy_helper.from_array(np.array([1, size, size], np.int64), "shape3"),
         numpy_helper.from_array(np.array([size, size], np.int64), "shape2"),
         numpy_helper.from_array(np.array([1], np.int64), "ax")])
    save(g, path)


# --------------------------------------------------------------------------- requests


def infer_json(x, k, outputs=None, rid=None, nested=False):
    x, k = np.asarray(x, np.float32), np.asarray(k, np.int32)
    body = {"inputs": [
        {"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x.tolist() if nested else x.ravel().tolist()},
        {"name": "k", "datatype": "INT32", "shape": list(k.shape), "data": k.ravel().tolist()}]}
    if outputs is not None:
        body["outputs"] = [{"name": o} for o in outputs]
    if rid is not None:
        body["id"] = rid
    return body


def binary_request(header, blobs):
    """A body and headers for the binary tensor data extension."""
    head = json.dumps(header).encode()
    return head + b"".join(blobs), {"Inference-Header-Content-Length": str(len(head)),
                                   "Content-Type": "application/octet-stream"}


def bytes_blob(items):
    return b"".join(struct.pack("<I", len(s)) + s for s in items)


def output(resp_json, name):
    """The output `name` of a response's JSON; AssertionError when absent."""
    for o in resp_json["outputs"]:
        if o["name"] == name:
            return o
    raise AssertionError(f"output {name} missing in {resp_json}")


def write_config(repo, name, config):
    os.makedirs(os.path.join(repo, name), exist_ok=True)
    with open(os.path.join(repo, name, "config.json"), "w") as f:
        json.dump(config, f)


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class Server:
    """`loom serve` on 127.0.0.1 with ephemeral ports; a context manager."""

    def __init__(self, loom, repo, extra=(), startup_timeout=60, grpc=False):
        self.cmd = [loom, "serve", "--model-repository", repo, "--http-port", "0", "--metrics-port", "0",
                    "--grpc-port", "0" if grpc else "-1", "--host", "127.0.0.1", *extra]
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr_lines = []
        lines = queue.Queue()
        threading.Thread(target=self._pump, args=(self.proc.stdout, lines), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, None), daemon=True).start()
        self.http = self.metrics = self.grpc = None
        deadline = time.time() + startup_timeout
        while self.http is None or self.metrics is None:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                self.stop()
                raise RuntimeError("server did not start in time:\n" + "".join(self.stderr_lines))
            if line is None:
                raise RuntimeError(f"server exited with {self.proc.wait()}:\n" + "".join(self.stderr_lines))
            m = re.match(r"loom serve: (HTTP|gRPC|metrics) on 127\.0\.0\.1:(\d+)", line)
            if m and m.group(1) == "HTTP":
                self.http = f"http://127.0.0.1:{m.group(2)}"
            elif m and m.group(1) == "gRPC":
                self.grpc = f"127.0.0.1:{m.group(2)}"
            elif m:
                self.metrics = f"http://127.0.0.1:{m.group(2)}"

    def _pump(self, stream, lines):
        for line in stream:
            if lines is not None:
                lines.put(line)
            else:
                self.stderr_lines.append(line)
        if lines is not None:
            lines.put(None)

    def url(self, path):
        return self.http + path

    def get(self, path, **kw):
        return requests.get(self.http + path, timeout=kw.pop("timeout", 30), **kw)

    def post(self, path, **kw):
        return requests.post(self.http + path, timeout=kw.pop("timeout", 30), **kw)

    def metric_text(self):
        return requests.get(self.metrics + "/metrics", timeout=30).text

    def alive(self):
        return self.proc.poll() is None and self.get("/v2/health/live").status_code == 200

    def stop(self, timeout=30):
        """SIGTERM, then SIGKILL if it has not exited; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def metric(text, name, **labels):
    """The value of one sample of the exposition text (0 when absent)."""
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        if line.startswith(name + "{") and want in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


class Checks:
    """Counts checks; fail() exits 1 with the reason."""

    def __init__(self):
        self.count = 0

    def ok(self, cond, what):
        self.count += 1
        if not cond:
            print(f"FAIL: {what}", file=sys.stderr)
            sys.exit(1)

    def error(self, r, status, contains, what):
        """An error answer: the status, a JSON body {"error": ...} naming `contains`."""
        try:
            body = r.json()
        except ValueError:
            body = None
        self.ok(r.status_code == status and isinstance(body, dict) and isinstance(body.get("error"), str)
                and contains in body["error"],
                f"{what}: expected {status} with an error naming '{contains}', got {r.status_code} {r.text[:300]}")
