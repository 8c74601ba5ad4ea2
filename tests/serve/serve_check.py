#!/usr/bin/python3
"""`loom serve` against real HTTP clients (Python requests, raw sockets), on
127.0.0.1 with ephemeral ports. Driven by ctest (label `serve`):

  serve_check.py AREA --loom L --work DIR

AREA:
  protocol    health, server and model metadata, JSON and binary tensors of
              every kind the models take, versions, the repository API, /metrics
  malformed   bad JSON, wrong shapes and datatypes, truncated binary data, huge
              declared sizes, unknown models, oversized and cut-off bodies: each
              answered with a protocol error, and the server still serves
  batching    concurrent requests merged into fewer runs (seen in /metrics),
              results equal to unbatched runs; different non-batch dims never merged
  overload    a full queue answers 503, a request past its timeout 504, a
              reload under load loses nothing, and the server still serves
  shutdown    SIGTERM while requests run: every one is answered, exit 0
Exit 0 when every check passes, 1 with the failed check on stderr.
"""
import argparse
import concurrent.futures as futures
import json
import os
import signal
import socket
import struct
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_fixture import (Checks, Server, binary_request, bytes_blob, fixed_model, fresh_dir,  # noqa: E402
                           infer_json, metric, mix_expected, mix_model, output, slow_model, types_model,
                           write_config)

C = Checks()
NOTES = []


def split_binary_response(r):
    """The JSON header and each binary output's bytes of a binary response."""
    n = int(r.headers["Inference-Header-Content-Length"])
    header = json.loads(r.content[:n])
    blobs, pos = {}, n
    for o in header["outputs"]:
        size = o.get("parameters", {}).get("binary_data_size")
        if size is not None:
            blobs[o["name"]] = r.content[pos:pos + size]
            pos += size
    C.ok(pos == len(r.content), "binary response: sizes add up to the body")
    return header, blobs


# --------------------------------------------------------------------------- areas


def area_protocol(loom, work):
    repo = fresh_dir(os.path.join(work, "repo"))
    mix_model(os.path.join(repo, "mix", "1", "model.onnx"))
    write_config(repo, "mix", {"max_batch_size": 8})
    types_model(os.path.join(repo, "types", "1", "model.onnx"))
    write_config(repo, "types", {"max_batch_size": 8})
    fixed_model(os.path.join(repo, "fixed", "1", "model.onnx"), 2.0)
    fixed_model(os.path.join(repo, "fixed", "2", "model.onnx"), 3.0)
    os.makedirs(os.path.join(repo, "broken", "1"))
    with open(os.path.join(repo, "broken", "1", "model.onnx"), "wb") as f:
        f.write(b"not an onnx model")
    with Server(loom, repo) as s:
        C.ok(s.get("/v2/health/live").status_code == 200, "live")
        C.ok(s.get("/v2/health/ready").status_code == 200, "ready")
        meta = s.get("/v2").json()
        C.ok(meta["name"] == "loom" and "binary_tensor_data" in meta["extensions"] and meta["version"], f"server metadata {meta}")

        m = s.get("/v2/models/mix").json()
        C.ok(m["name"] == "mix" and m["versions"] == ["1"], f"model metadata {m}")
        C.ok(m["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 4]},
                             {"name": "k", "datatype": "INT32", "shape": [-1, 4]}], f"inputs {m['inputs']}")
        C.ok(m["outputs"] == [{"name": "y", "datatype": "FP32", "shape": [-1, 3]},
                              {"name": "z", "datatype": "INT64", "shape": [-1, 4]}], f"outputs {m['outputs']}")
        t = s.get("/v2/models/types/versions/1").json()
        C.ok([i["datatype"] for i in t["inputs"]] == ["FP16", "BOOL", "BYTES"], f"types metadata {t}")
        C.ok(s.get("/v2/models/fixed").json()["versions"] == ["1", "2"], "versions listed")
        C.ok(s.get("/v2/models/mix/ready").status_code == 200, "model ready")
        C.ok(s.get("/v2/models/fixed/versions/2/ready").status_code == 200, "version ready")
        C.error(s.get("/v2/models/fixed/versions/3/ready"), 404, "version '3'", "unknown version not ready")
        C.error(s.get("/v2/models/nosuch/ready"), 404, "nosuch", "unknown model not ready")
        C.error(s.get("/v2/models/broken/ready"), 404, "not ready", "broken model not ready")

        # JSON tensors: flat and nested data, a requested output subset, the id echoed.
        x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
        k = np.arange(12, dtype=np.int32).reshape(3, 4) - 6
        y_ref, z_ref = mix_expected(x, k)
        for nested in (False, True):
            r = s.post("/v2/models/mix/infer", json=infer_json(x, k, nested=nested))
            C.ok(r.status_code == 200, f"infer JSON (nested={nested}): {r.status_code} {r.text[:300]}")
            j = r.json()
            C.ok(j["model_name"] == "mix" and j["model_version"] == "1", f"response names the model {j}")
            y = output(j, "y")
            C.ok(y["datatype"] == "FP32" and y["shape"] == [3, 3], f"y metadata {y}")
            C.ok(np.allclose(np.array(y["data"], np.float32).reshape(3, 3), y_ref, rtol=1e-5, atol=1e-6), "y values")
            z = output(j, "z")
            C.ok(z["datatype"] == "INT64" and z["data"] == z_ref.ravel().tolist(), f"z values {z}")
        r = s.post("/v2/models/mix/versions/1/infer", json=infer_json(x, k, outputs=["z"], rid="req-7"))
        j = r.json()
        C.ok(r.status_code == 200 and j["id"] == "req-7" and [o["name"] for o in j["outputs"]] == ["z"],
             f"output subset and id {j}")

        # FP16, BOOL, BYTES as JSON.
        h = np.array([[0.5, -2.0], [65504.0, 1e-3]], np.float16)
        b = [[True, False], [False, False]]
        body = {"inputs": [
            {"name": "h", "datatype": "FP16", "shape": [2, 2], "data": h.astype(np.float32).ravel().tolist()},
            {"name": "b", "datatype": "BOOL", "shape": [2, 2], "data": b},
            {"name": "s", "datatype": "BYTES", "shape": [2], "data": ["héllo", ""]}]}
        r = s.post("/v2/models/types/infer", json=body)
        C.ok(r.status_code == 200, f"types JSON: {r.status_code} {r.text[:300]}")
        j = r.json()
        C.ok(np.array_equal(np.array(output(j, "h_out")["data"], np.float32), h.astype(np.float32).ravel()),
             f"FP16 round trip {output(j, 'h_out')}")
        C.ok(output(j, "b_out")["data"] == [False, True, True, True] and output(j, "b_out")["datatype"] == "BOOL",
             f"BOOL {output(j, 'b_out')}")
        C.ok(output(j, "s_out")["data"] == ["héllo", ""] and output(j, "s_out")["datatype"] == "BYTES",
             f"BYTES {output(j, 's_out')}")

        # Binary tensor data: inputs binary, every output binary.
        header = {"inputs": [
            {"name": "x", "datatype": "FP32", "shape": [3, 4], "parameters": {"binary_data_size": x.nbytes}},
            {"name": "k", "datatype": "INT32", "shape": [3, 4], "parameters": {"binary_data_size": k.nbytes}}],
            "parameters": {"binary_data_output": True}}
        data, headers = binary_request(header, [x.tobytes(), k.tobytes()])
        r = s.post("/v2/models/mix/infer", data=data, headers=headers)
        C.ok(r.status_code == 200 and r.headers.get("Content-Type", "").startswith("application/octet-stream"),
             f"binary infer: {r.status_code} {r.headers} {r.content[:200]}")
        hdr, blobs = split_binary_response(r)
        C.ok(np.allclose(np.frombuffer(blobs["y"], np.float32).reshape(3, 3), y_ref, rtol=1e-5, atol=1e-6), "binary y")
        C.ok(np.array_equal(np.frombuffer(blobs["z"], np.int64).reshape(3, 4), z_ref), "binary z")
        C.ok("data" not in output(hdr, "y"), "binary output has no JSON data")
        # Mixed: x binary, k JSON; y as JSON, z binary by its own parameter.
        header = {"inputs": [
            {"name": "x", "datatype": "FP32", "shape": [3, 4], "parameters": {"binary_data_size": x.nbytes}},
            {"name": "k", "datatype": "INT32", "shape": [3, 4], "data": k.ravel().tolist()}],
            "outputs": [{"name": "y"}, {"name": "z", "parameters": {"binary_data": True}}]}
        data, headers = binary_request(header, [x.tobytes()])
        r = s.post("/v2/models/mix/infer", data=data, headers=headers)
        hdr, blobs = split_binary_response(r)
        C.ok(np.allclose(np.array(output(hdr, "y")["data"], np.float32).reshape(3, 3), y_ref, rtol=1e-5, atol=1e-6)
             and np.array_equal(np.frombuffer(blobs["z"], np.int64).reshape(3, 4), z_ref), "mixed JSON / binary")
        # BYTES and BOOL and FP16 in binary.
        strings = [b"ab\x00c", "dé".encode()]
        header = {"inputs": [
            {"name": "h", "datatype": "FP16", "shape": [2, 2], "parameters": {"binary_data_size": h.nbytes}},
            {"name": "b", "datatype": "BOOL", "shape": [2, 2], "parameters": {"binary_data_size": 4}},
            {"name": "s", "datatype": "BYTES", "shape": [2], "parameters": {"binary_data_size": len(bytes_blob(strings))}}],
            "parameters": {"binary_data_output": True}}
        data, headers = binary_request(header, [h.tobytes(), bytes([1, 0, 0, 0]), bytes_blob(strings)])
        r = s.post("/v2/models/types/infer", data=data, headers=headers)
        C.ok(r.status_code == 200, f"types binary: {r.status_code} {r.text[:300]}")
        hdr, blobs = split_binary_response(r)
        C.ok(np.array_equal(np.frombuffer(blobs["h_out"], np.float16), h.ravel()), "FP16 binary")
        C.ok(list(blobs["b_out"]) == [0, 1, 1, 1], "BOOL binary")
        C.ok(blobs["s_out"] == bytes_blob(strings), "BYTES binary (length-prefixed)")

        # Versions: the latest by default, each by number.
        one = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}
        C.ok(s.post("/v2/models/fixed/infer", json=one).json()["outputs"][0]["data"] == [3, 6, 9, 12], "latest version")
        C.ok(s.post("/v2/models/fixed/versions/1/infer", json=one).json()["outputs"][0]["data"] == [2, 4, 6, 8],
             "version 1")

        # Repository API.
        idx = s.post("/v2/repository/index").json()
        states = {(e["name"], e.get("version", "")): e for e in idx}
        C.ok(states[("mix", "1")]["state"] == "READY" and states[("fixed", "2")]["state"] == "READY", f"index {idx}")
        C.ok(states[("broken", "")]["state"] == "UNAVAILABLE" and states[("broken", "")]["reason"], f"broken listed {idx}")
        C.ok(s.post("/v2/repository/models/fixed/unload").status_code == 200, "unload")
        C.error(s.post("/v2/models/fixed/infer", json=one), 404, "not ready", "infer on an unloaded model")
        C.error(s.get("/v2/models/fixed/ready"), 404, "fixed", "unloaded model not ready")
        C.error(s.post("/v2/repository/models/fixed/unload"), 404, "not loaded", "unload twice")
        C.ok(s.post("/v2/repository/models/fixed/load").status_code == 200, "load")
        C.ok(s.post("/v2/models/fixed/infer", json=one).status_code == 200, "infer after reload")
        C.error(s.post("/v2/repository/models/nosuch/load"), 404, "nosuch", "load an unknown model")
        C.error(s.post("/v2/repository/models/bad$name/load"), 400, "not a valid model name", "load a bad name")
        C.error(s.post("/v2/repository/models/broken/load"), 400, "not a valid ONNX model", "load a broken model")

        # Metrics: Prometheus text with the model's series.
        text = s.metric_text()
        C.ok("# TYPE loom_inference_requests_total counter" in text
             and "# TYPE loom_inference_request_duration_seconds histogram" in text, "metrics format")
        C.ok(metric(text, "loom_inference_requests_total", model="mix", version="1", status="success") >= 5,
             "success counted")
        C.ok(metric(text, "loom_inference_request_duration_seconds_count", model="mix", version="1") >= 5,
             "latency histogram counted")
        C.ok('le="+Inf"' in text and "loom_inference_batch_size_bucket" in text, "histogram buckets")
        C.ok(s.stop() == 0, "clean exit")


def area_malformed(loom, work):
    repo = fresh_dir(os.path.join(work, "repo"))
    mix_model(os.path.join(repo, "mix", "1", "model.onnx"))
    write_config(repo, "mix", {"max_batch_size": 8})
    types_model(os.path.join(repo, "types", "1", "model.onnx"))
    with Server(loom, repo, extra=["--max-request-mb", "2", "--max-json-mb", "1"]) as s:
        url = "/v2/models/mix/infer"
        good = infer_json(np.ones((1, 4)), np.ones((1, 4)))

        def bad(body, contains, what, status=400, headers=None, raw=False):
            if raw:
                r = s.post(url, data=body, headers=headers or {})
            else:
                r = s.post(url, json=body, headers=headers or {})
            C.error(r, status, contains, what)

        def with_input(i, **changes):
            body = json.loads(json.dumps(good))
            body["inputs"][i].update(changes)
            return body

        bad(b"{not json", "not valid JSON", "bad JSON", raw=True)
        bad(b"", "not valid JSON", "empty body", raw=True)
        bad([1, 2], "JSON object", "array body")
        bad({"inputs": {}}, "'inputs' must be an array", "inputs not an array")
        bad({"inputs": [good["inputs"][0]]}, "missing input 'k'", "missing input")
        bad({"inputs": good["inputs"] + [good["inputs"][0]]}, "given twice", "input twice")
        bad(with_input(0, name="nosuch"), "unknown input 'nosuch'", "unknown input")
        bad(with_input(0, datatype="FP64"), "FP64 but the model expects FP32", "wrong datatype")
        bad(with_input(0, datatype="FLOAT"), "unknown datatype", "unknown datatype name")
        bad(with_input(0, shape=[4]), "rank", "wrong rank")
        bad(with_input(0, shape=[1, 5], data=[0] * 5), "fixes dim 1 at 4", "wrong fixed dim")
        bad(with_input(0, shape=[2, 4]), "has 8 elements but 'data' has 4", "shape and data disagree")
        bad(with_input(0, data=["a", 1, 2, 3]), "not a number", "string in FP32 data")
        bad(with_input(1, data=[2 ** 40, 0, 0, 0]), "not a valid INT32", "INT32 overflow")
        bad(with_input(1, data=[1.5, 0, 0, 0]), "not a valid INT32", "float in INT32 data")
        bad(with_input(0, shape=[-1, 4]), "non-negative", "negative dim")
        bad(with_input(0, shape="1,4"), "'shape' must be an array", "shape not an array")
        bad(with_input(0, shape=[2 ** 60, 4]), "elements but 'data' has 4", "huge declared shape")
        bad(with_input(0, shape=[2 ** 40, 2 ** 40, 2 ** 40]), "overflows", "shape product overflow")
        bad(with_input(0, data=None), "'data'", "no data")
        bad(with_input(0, data=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]),
            "nests deeper", "deeply nested data")
        deep = b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": ' + b"[" * 20000 + b"]" * 20000 + b"}]}"
        r = s.post(url, data=deep)
        C.ok(r.status_code == 400, f"20000-deep nesting: {r.status_code}")
        bad(with_input(1, shape=[2, 4], data=[0] * 8), "disagree on the batch dimension", "batch dims differ")
        nine = infer_json(np.ones((9, 4)), np.ones((9, 4)))
        bad(nine, "exceeds the model's max_batch_size 8", "batch over max_batch_size")
        bad(dict(good, outputs=[{"name": "nosuch"}]), "unknown output 'nosuch'", "unknown output")
        bad(dict(good, outputs=[{"name": "y", "parameters": {"classification": 2}}]), "classification", "classification")
        bad(dict(good, id=5), "'id' must be a string", "numeric id")

        # Binary data: header and sizes checked against the bytes received.
        x = np.ones((1, 4), np.float32)
        k = np.ones((1, 4), np.int32)
        hdr = {"inputs": [
            {"name": "x", "datatype": "FP32", "shape": [1, 4], "parameters": {"binary_data_size": 16}},
            {"name": "k", "datatype": "INT32", "shape": [1, 4], "parameters": {"binary_data_size": 16}}]}
        data, headers = binary_request(hdr, [x.tobytes(), k.tobytes()])
        C.ok(s.post(url, data=data, headers=headers).status_code == 200, "valid binary request")
        bad(data[:-5], "only 11 binary bytes remain", "truncated binary data", headers=headers, raw=True)
        bad(data + b"xx", "2 bytes of binary data after", "trailing binary bytes", headers=headers, raw=True)
        bad(data, "exceeds the body", "header length past the body",
            headers={"Inference-Header-Content-Length": str(len(data) + 1)}, raw=True)
        bad(data, "expected a byte count", "header length not a number",
            headers={"Inference-Header-Content-Length": "-3"}, raw=True)
        bad(data, "expected a byte count", "header length huge",
            headers={"Inference-Header-Content-Length": "9" * 40}, raw=True)
        bad(data, "not valid JSON", "header length cuts the JSON",
            headers={"Inference-Header-Content-Length": "10"}, raw=True)
        huge = json.loads(json.dumps(hdr))
        huge["inputs"][0]["parameters"]["binary_data_size"] = 2 ** 63
        data2, headers2 = binary_request(huge, [x.tobytes(), k.tobytes()])
        bad(data2, "binary bytes remain", "huge binary_data_size", headers=headers2, raw=True)
        wrong = json.loads(json.dumps(hdr))
        wrong["inputs"][0]["shape"] = [2 ** 60, 4]
        data3, headers3 = binary_request(wrong, [x.tobytes(), k.tobytes()])
        bad(data3, "more than 2^64", "shape times element size overflows", headers=headers3, raw=True)
        wrong["inputs"][0]["shape"] = [2, 4]
        data3, headers3 = binary_request(wrong, [x.tobytes(), k.tobytes()])
        bad(data3, "needs 32 bytes but 16 were sent", "binary size and shape disagree", headers=headers3, raw=True)
        bad(hdr, "without an Inference-Header-Content-Length", "binary size without the header")
        neg = json.loads(json.dumps(hdr))
        neg["inputs"][0]["parameters"]["binary_data_size"] = -1
        bad(neg, "non-negative integer", "negative binary size")
        # BYTES and BOOL binary data on the types model.
        turl = "/v2/models/types/infer"
        thdr = lambda size: {"inputs": [  # noqa: E731
            {"name": "h", "datatype": "FP16", "shape": [1, 2], "data": [1, 2]},
            {"name": "b", "datatype": "BOOL", "shape": [1, 2], "data": [True, False]},
            {"name": "s", "datatype": "BYTES", "shape": [1], "parameters": {"binary_data_size": size}}]}
        blob = struct.pack("<I", 1000) + b"abc"
        data4, headers4 = binary_request(thdr(len(blob)), [blob])
        C.error(s.post(turl, data=data4, headers=headers4), 400, "declares 1000 bytes", "BYTES length past its data")
        blob = b"\x01\x00"
        data4, headers4 = binary_request(thdr(len(blob)), [blob])
        C.error(s.post(turl, data=data4, headers=headers4), 400, "ends inside element 0", "BYTES length cut")
        bhdr = {"inputs": [
            {"name": "h", "datatype": "FP16", "shape": [1, 2], "data": [1, 2]},
            {"name": "b", "datatype": "BOOL", "shape": [1, 2], "parameters": {"binary_data_size": 2}},
            {"name": "s", "datatype": "BYTES", "shape": [1], "data": ["x"]}]}
        data5, headers5 = binary_request(bhdr, [bytes([1, 7])])
        C.error(s.post(turl, data=data5, headers=headers5), 400, "input 'b'", "BOOL byte that is not 0 or 1")

        # Unknown models, versions and routes.
        C.error(s.post("/v2/models/nosuch/infer", json=good), 404, "unknown model 'nosuch'", "unknown model")
        C.error(s.post("/v2/models/mix/versions/9/infer", json=good), 404, "unknown version '9'", "unknown version")
        C.error(s.get("/v2/nothing/here"), 404, "no route", "unknown route")
        # Body over --max-request-mb: 413 before anything is parsed.
        C.error(s.post(url, data=b"x" * (3 << 20)), 413, "size limit", "body over the size limit")
        big_json = b'{"inputs": [' + b" " * (1 << 20) + b"]}"
        C.error(s.post(url, data=big_json), 413, "--max-json-mb", "JSON over its limit")
        # A body cut off by the client, and a connection that sends garbage.
        for raw in (b"POST /v2/models/mix/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"inputs\"",
                    b"\x00\xff garbage \r\n\r\n", b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", int(s.http.rsplit(":", 1)[1])), timeout=10) as sock:
                sock.sendall(raw)
                sock.shutdown(socket.SHUT_WR)
                try:
                    sock.recv(4096)
                except OSError:
                    pass
        # Mutated requests (bytes flipped, cut, repeated; JSON and binary): each
        # answered 200 or 4xx with an error object, never a dropped connection.
        rng = np.random.default_rng(5)
        seeds = [(json.dumps(good).encode(), {}), (data, headers)]
        for i in range(300):
            body, hdrs = seeds[i % 2]
            b = bytearray(body)
            for _ in range(int(rng.integers(1, 6))):
                op = rng.integers(0, 3)
                pos = int(rng.integers(0, len(b)))
                if op == 0:
                    b[pos] = int(rng.integers(0, 256))
                elif op == 1:
                    del b[pos:pos + int(rng.integers(1, 40))]
                else:
                    b[pos:pos] = b[pos:pos + int(rng.integers(1, 40))]
            r = s.post(url, data=bytes(b), headers=hdrs)
            if r.status_code != 200:
                C.error(r, r.status_code, "", f"mutated request {i} answered with an error object")
                C.ok(400 <= r.status_code < 500, f"mutated request {i}: 4xx, got {r.status_code} {r.text[:200]}")
        # Nothing lost: the server still answers correctly, and counted the failures.
        r = s.post(url, json=good)
        C.ok(r.status_code == 200 and output(r.json(), "z")["data"] == [2, 2, 2, 2], f"still serving: {r.text[:200]}")
        text = s.metric_text()
        C.ok(metric(text, "loom_inference_requests_total", model="mix", version="1", status="failure") >= 30,
             "failures counted in /metrics")
        C.ok(s.alive() and s.stop() == 0, "server alive and exits cleanly")


def area_batching(loom, work):
    repo = fresh_dir(os.path.join(work, "repo"))
    mix_model(os.path.join(repo, "mix", "1", "model.onnx"))
    write_config(repo, "mix", {"max_batch_size": 16, "dynamic_batching": {"max_queue_delay_us": 400000}})
    mix_model(os.path.join(repo, "mix_single", "1", "model.onnx"))
    # A free non-batch dim: requests that differ in it must never be merged.
    from serve_fixture import helper, TensorProto, save  # noqa: E402
    save(helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "neg",
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "L"])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "L"])]),
         os.path.join(repo, "neg", "1", "model.onnx"))
    write_config(repo, "neg", {"max_batch_size": 16, "dynamic_batching": {"max_queue_delay_us": 400000}})
    rng = np.random.default_rng(1)
    with Server(loom, repo) as s:
        reqs = []
        for i in range(12):
            rows = 1 + (i % 3 == 0)
            reqs.append((rng.standard_normal((rows, 4)).astype(np.float32), rng.integers(-50, 50, (rows, 4)).astype(np.int32)))
        # Warm both models so the timed window holds only the concurrent burst.
        s.post("/v2/models/mix/infer", json=infer_json(*reqs[0]))
        s.post("/v2/models/mix_single/infer", json=infer_json(*reqs[0]))
        before = s.metric_text()
        with futures.ThreadPoolExecutor(len(reqs)) as pool:
            batched = list(pool.map(lambda r: s.post("/v2/models/mix/infer", json=infer_json(*r)), reqs))
        after = s.metric_text()
        single = [s.post("/v2/models/mix_single/infer", json=infer_json(*r)) for r in reqs]
        for (x, k), rb, rs in zip(reqs, batched, single):
            C.ok(rb.status_code == 200 and rs.status_code == 200, f"batched / single answered {rb.text[:200]}")
            yb = np.array(output(rb.json(), "y")["data"], np.float32)
            ys = np.array(output(rs.json(), "y")["data"], np.float32)
            C.ok(output(rb.json(), "y")["shape"] == [len(x), 3], "each request gets its own rows back")
            C.ok(np.array_equal(yb, ys), f"batched result equals the unbatched one: {yb} vs {ys}")
            C.ok(np.allclose(yb.reshape(-1, 3), mix_expected(x, k)[0], rtol=1e-5, atol=1e-6), "batched y correct")
            C.ok(output(rb.json(), "z")["data"] == output(rs.json(), "z")["data"], "batched z equals unbatched")
        lbl = dict(model="mix", version="1")
        runs = metric(after, "loom_inference_executions_total", **lbl) - metric(before, "loom_inference_executions_total", **lbl)
        rows = metric(after, "loom_inference_batch_size_sum", **lbl) - metric(before, "loom_inference_batch_size_sum", **lbl)
        big = metric(after, "loom_inference_batch_size_bucket", le="1", **lbl)
        total_rows = sum(len(x) for x, _ in reqs)
        C.ok(rows == total_rows, f"batch sizes sum to the rows sent: {rows} vs {total_rows}")
        C.ok(runs < len(reqs) / 2, f"{len(reqs)} concurrent requests ran in {runs} runs (batched)")
        C.ok(metric(after, "loom_inference_batch_size_count", **lbl) - big >= 1, "a batch above 1 row in the histogram")
        # Different non-batch dims: never in the same run.
        shapes = [(1, 3), (1, 5), (1, 3), (1, 5)]
        with futures.ThreadPoolExecutor(len(shapes)) as pool:
            outs = list(pool.map(lambda sh: s.post("/v2/models/neg/infer", json={"inputs": [
                {"name": "x", "datatype": "FP32", "shape": list(sh), "data": [float(sh[1])] * sh[1]}]}), shapes))
        for sh, r in zip(shapes, outs):
            C.ok(r.status_code == 200 and r.json()["outputs"][0]["shape"] == list(sh)
                 and r.json()["outputs"][0]["data"] == [-float(sh[1])] * sh[1], f"neg {sh}: {r.text[:200]}")
        text = s.metric_text()
        C.ok(metric(text, "loom_inference_executions_total", model="neg", version="1") >= 2,
             "requests with different non-batch dims ran apart")
        C.ok(metric(text, "loom_inference_batch_size_sum", model="neg", version="1") == 4, "neg rows counted")
        C.ok(s.stop() == 0, "clean exit")


def area_overload(loom, work):
    repo = fresh_dir(os.path.join(work, "repo"))
    slow_model(os.path.join(repo, "slow", "1", "model.onnx"))
    write_config(repo, "slow", {"max_batch_size": 4, "max_queue_size": 2, "instance_count": 1})
    slow_model(os.path.join(repo, "slow_timeout", "1", "model.onnx"))
    write_config(repo, "slow_timeout", {"max_batch_size": 4, "request_timeout_ms": 60})
    slow_model(os.path.join(repo, "slow_reload", "1", "model.onnx"))
    write_config(repo, "slow_reload", {"max_batch_size": 4})
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 1], "data": [1.0]}]}
    with Server(loom, repo) as s:
        t0 = time.time()
        r = s.post("/v2/models/slow/infer", json=body)
        one = time.time() - t0
        NOTES.append(f"one run of the slow model: {one * 1000:.0f} ms")
        C.ok(r.status_code == 200 and abs(r.json()["outputs"][0]["data"][0] - 1.024) < 1e-3, f"slow model: {r.text[:200]}")
        with futures.ThreadPoolExecutor(12) as pool:
            rs = list(pool.map(lambda _: s.post("/v2/models/slow/infer", json=body), range(12)))
        codes = [r.status_code for r in rs]
        C.ok(set(codes) <= {200, 503} and codes.count(503) >= 1 and codes.count(200) >= 1,
             f"a full queue answers 503, the rest 200: {codes} (one run {one:.3f} s)")
        C.error(next(r for r in rs if r.status_code == 503), 503, "queue is full", "503 body")
        C.ok(metric(s.metric_text(), "loom_inference_queue_rejections_total", model="slow", version="1") == codes.count(503),
             "rejections counted")
        s.post("/v2/models/slow_timeout/infer", json=body, timeout=60)  # first run builds the kernels
        with futures.ThreadPoolExecutor(8) as pool:
            rs = list(pool.map(lambda _: s.post("/v2/models/slow_timeout/infer", json=body), range(8)))
        codes = [r.status_code for r in rs]
        C.ok(set(codes) <= {200, 504} and codes.count(504) >= 1, f"requests past their timeout answer 504: {codes}")
        C.error(next(r for r in rs if r.status_code == 504), 504, "timed out after 60 ms", "504 body")
        # Reloading a model while its requests run: they finish on the old
        # sessions, later ones run on the new.
        with futures.ThreadPoolExecutor(4) as pool:
            pending = [pool.submit(s.post, "/v2/models/slow_reload/infer", json=body) for _ in range(4)]
            time.sleep(0.05)
            reload = s.post("/v2/repository/models/slow_reload/load")
            codes = [p.result().status_code for p in pending]
        C.ok(reload.status_code == 200 and codes == [200] * 4, f"reload under load: {reload.text} {codes}")
        C.ok(s.post("/v2/models/slow_reload/infer", json=body).status_code == 200, "served after reload")
        r = s.post("/v2/models/slow/infer", json=body)
        C.ok(r.status_code == 200 and s.alive(), "still serving after overload")
        C.ok(s.stop() == 0, "clean exit")


def area_shutdown(loom, work):
    repo = fresh_dir(os.path.join(work, "repo"))
    slow_model(os.path.join(repo, "slow", "1", "model.onnx"))
    write_config(repo, "slow", {"max_batch_size": 4, "max_queue_size": 64})
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 1], "data": [2.0]}]}
    s = Server(loom, repo)
    try:
        C.ok(s.post("/v2/models/slow/infer", json=body).status_code == 200, "warm-up")
        pool = futures.ThreadPoolExecutor(6)
        pending = [pool.submit(s.post, "/v2/models/slow/infer", json=body) for _ in range(6)]
        time.sleep(0.1)  # requests in the queue and running
        s.proc.send_signal(signal.SIGTERM)
        rs = [p.result(timeout=60) for p in pending]
        C.ok(all(r.status_code == 200 for r in rs), f"every request in flight answered: {[r.status_code for r in rs]}")
        C.ok(s.proc.wait(timeout=60) == 0, f"exit 0 after SIGTERM: {''.join(s.stderr_lines)}")
        time.sleep(0.2)
        C.ok(any("finishing requests in flight" in l for l in s.stderr_lines), "shutdown announced")
        try:
            s.get("/v2/health/live", timeout=5)
            C.ok(False, "no connections after shutdown")
        except Exception:
            C.ok(True, "refuses connections after shutdown")
    finally:
        s.stop()


AREAS = {"protocol": area_protocol, "malformed": area_malformed, "batching": area_batching,
         "overload": area_overload, "shutdown": area_shutdown}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("area", choices=sorted(AREAS))
    ap.add_argument("--loom", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    t0 = time.time()
    AREAS[a.area](a.loom, fresh_dir(a.work))
    print(f"serve {a.area}: {C.count} checks passed in {time.time() - t0:.1f} s")
    for line in NOTES:
        print(line)


if __name__ == "__main__":
    main()
