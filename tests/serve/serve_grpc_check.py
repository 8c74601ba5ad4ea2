#!/usr/bin/python3
"""`loom serve`'s gRPC service (inference.GRPCInferenceService) against
Python grpcio on 127.0.0.1, driven by ctest (label `serve`):

  serve_grpc_check.py --loom L --proto tools/loom/serve/grpc_predict_v2.proto --work DIR

Generates the Python stubs with protoc and grpc_python_plugin (Debian
protobuf-compiler-grpc), then checks health, metadata, inference with typed
and raw tensor contents, protocol errors (NOT_FOUND, INVALID_ARGUMENT,
RESOURCE_EXHAUSTED), that the server still serves afterwards, and that
SIGTERM lets the calls in flight finish.
Exit 0 on success, 77 (skipped) without grpcio, protoc or the plugin, or a
loom built without gRPC; 1 with the failed check on stderr.
"""
import argparse
import concurrent.futures as futures
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_fixture import Checks, Server, fresh_dir, mix_expected, mix_model, slow_model, types_model, write_config  # noqa: E402

SKIP = 77
C = Checks()


def stubs(proto, out):
    plugin = shutil.which("grpc_python_plugin")
    protoc = shutil.which("protoc")
    try:
        import grpc  # noqa: F401
    except ImportError:
        print("skipped: no python3-grpcio")
        sys.exit(SKIP)
    if not plugin or not protoc:
        print("skipped: no protoc or grpc_python_plugin (protobuf-compiler-grpc)")
        sys.exit(SKIP)
    subprocess.run([protoc, f"-I{os.path.dirname(proto)}", f"--python_out={out}", f"--grpc_python_out={out}",
                    f"--plugin=protoc-gen-grpc_python={plugin}", proto], check=True)
    sys.path.insert(0, out)
    import grpc_predict_v2_pb2 as pb
    import grpc_predict_v2_pb2_grpc as pbg
    return pb, pbg


def expect_error(call, code, contains, what):
    import grpc
    try:
        call()
    except grpc.RpcError as e:
        C.ok(e.code() == code and contains in e.details(), f"{what}: got {e.code()} '{e.details()}'")
        return
    C.ok(False, f"{what}: no error")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loom", required=True)
    ap.add_argument("--proto", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    work = fresh_dir(a.work)
    pb, pbg = stubs(a.proto, fresh_dir(os.path.join(work, "stubs")))
    import grpc
    repo = fresh_dir(os.path.join(work, "repo"))
    mix_model(os.path.join(repo, "mix", "1", "model.onnx"))
    write_config(repo, "mix", {"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_us": 1000}})
    types_model(os.path.join(repo, "types", "1", "model.onnx"))
    slow_model(os.path.join(repo, "slow", "1", "model.onnx"))
    write_config(repo, "slow", {"max_batch_size": 4, "max_queue_size": 1})
    slow_model(os.path.join(repo, "slow_q", "1", "model.onnx"))
    with Server(a.loom, repo, grpc=True) as s:
        if s.grpc is None:
            print("skipped: loom built without gRPC")
            sys.exit(SKIP)
        stub = pbg.GRPCInferenceServiceStub(grpc.insecure_channel(s.grpc))
        C.ok(stub.ServerLive(pb.ServerLiveRequest()).live, "live")
        C.ok(stub.ServerReady(pb.ServerReadyRequest()).ready, "ready")
        meta = stub.ServerMetadata(pb.ServerMetadataRequest())
        C.ok(meta.name == "loom" and "binary_tensor_data" in meta.extensions, f"server metadata {meta}")
        C.ok(stub.ModelReady(pb.ModelReadyRequest(name="mix")).ready, "model ready")
        C.ok(not stub.ModelReady(pb.ModelReadyRequest(name="nosuch")).ready, "unknown model not ready")
        m = stub.ModelMetadata(pb.ModelMetadataRequest(name="mix", version="1"))
        C.ok([(t.name, t.datatype, list(t.shape)) for t in m.inputs] == [("x", "FP32", [-1, 4]), ("k", "INT32", [-1, 4])]
             and list(m.versions) == ["1"], f"model metadata {m}")

        x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
        k = (np.arange(8, dtype=np.int32).reshape(2, 4) - 3)
        y_ref, z_ref = mix_expected(x, k)

        def typed(x=x, k=k, **kw):
            r = pb.ModelInferRequest(model_name="mix", id="g1", **kw)
            i = r.inputs.add(name="x", datatype="FP32", shape=list(x.shape))
            i.contents.fp32_contents.extend(x.ravel().tolist())
            i = r.inputs.add(name="k", datatype="INT32", shape=list(k.shape))
            i.contents.int_contents.extend(k.ravel().tolist())
            return r

        def raw(xb=None, kb=None, xshape=(2, 4)):
            r = pb.ModelInferRequest(model_name="mix")
            r.inputs.add(name="x", datatype="FP32", shape=list(xshape))
            r.inputs.add(name="k", datatype="INT32", shape=[2, 4])
            r.raw_input_contents.extend([x.tobytes() if xb is None else xb, k.tobytes() if kb is None else kb])
            return r

        def check(res, what):
            outs = {o.name: (o, res.raw_output_contents[i]) for i, o in enumerate(res.outputs)}
            y = np.frombuffer(outs["y"][1], np.float32).reshape(list(outs["y"][0].shape))
            z = np.frombuffer(outs["z"][1], np.int64).reshape(list(outs["z"][0].shape))
            C.ok(outs["y"][0].datatype == "FP32" and outs["z"][0].datatype == "INT64", f"{what}: datatypes")
            C.ok(np.allclose(y, y_ref, rtol=1e-5, atol=1e-6) and np.array_equal(z, z_ref), f"{what}: values")

        res = stub.ModelInfer(typed())
        C.ok(res.model_name == "mix" and res.model_version == "1" and res.id == "g1", f"response names {res.id}")
        check(res, "typed contents")
        check(stub.ModelInfer(raw()), "raw contents")
        sub = typed()
        sub.outputs.add(name="z")
        C.ok([o.name for o in stub.ModelInfer(sub).outputs] == ["z"], "output subset")

        # BYTES and FP16 on the types model: raw and typed.
        h = np.array([[1.5, -2]], np.float16)
        r = pb.ModelInferRequest(model_name="types")
        r.inputs.add(name="h", datatype="FP16", shape=[1, 2])
        r.inputs.add(name="b", datatype="BOOL", shape=[1, 2])
        r.inputs.add(name="s", datatype="BYTES", shape=[1])
        r.raw_input_contents.extend([h.tobytes(), bytes([1, 0]), struct.pack("<I", 3) + b"a\x00b"])
        res = stub.ModelInfer(r)
        outs = {o.name: res.raw_output_contents[i] for i, o in enumerate(res.outputs)}
        C.ok(outs["h_out"] == h.tobytes() and outs["b_out"] == bytes([0, 1])
             and outs["s_out"] == struct.pack("<I", 3) + b"a\x00b", f"types raw {outs}")
        r = pb.ModelInferRequest(model_name="types")
        i = r.inputs.add(name="h", datatype="FP16", shape=[1, 2])
        i.contents.fp32_contents.extend([1, 2])
        i = r.inputs.add(name="b", datatype="BOOL", shape=[1, 2])
        i.contents.bool_contents.extend([True, False])
        i = r.inputs.add(name="s", datatype="BYTES", shape=[1])
        i.contents.bytes_contents.extend([b"q"])
        expect_error(lambda: stub.ModelInfer(r), grpc.StatusCode.INVALID_ARGUMENT, "no typed contents field",
                     "FP16 in typed contents")

        # Protocol errors, none of which stops the server.
        INVALID = grpc.StatusCode.INVALID_ARGUMENT
        expect_error(lambda: stub.ModelInfer(pb.ModelInferRequest(model_name="nosuch")), grpc.StatusCode.NOT_FOUND,
                     "unknown model 'nosuch'", "unknown model")
        expect_error(lambda: stub.ModelInfer(typed(model_version="7")), grpc.StatusCode.NOT_FOUND, "version '7'",
                     "unknown version")
        expect_error(lambda: stub.ModelMetadata(pb.ModelMetadataRequest(name="nosuch")), grpc.StatusCode.NOT_FOUND,
                     "nosuch", "metadata of an unknown model")
        bad = typed()
        bad.inputs[0].datatype = "FP64"
        expect_error(lambda: stub.ModelInfer(bad), INVALID, "FP64 but the model expects FP32", "wrong datatype")
        bad = typed()
        del bad.inputs[0].shape[:]
        bad.inputs[0].shape.extend([2 ** 60, 4])
        expect_error(lambda: stub.ModelInfer(bad), INVALID, "but its contents have 8", "huge shape, few contents")
        bad = typed()
        bad.inputs[0].shape[1] = 5
        expect_error(lambda: stub.ModelInfer(bad), INVALID, "fixes dim 1 at 4", "wrong fixed dim")
        expect_error(lambda: stub.ModelInfer(raw(xb=x.tobytes()[:-3])), INVALID, "needs 32 bytes but 29", "raw truncated")
        expect_error(lambda: stub.ModelInfer(raw(xshape=(2 ** 60, 4))), INVALID, "more than 2^64", "raw size overflow")
        short = raw()
        del short.raw_input_contents[1]
        expect_error(lambda: stub.ModelInfer(short), INVALID, "1 raw_input_contents for 2 inputs", "raw count")
        missing = typed()
        del missing.inputs[1]
        expect_error(lambda: stub.ModelInfer(missing), INVALID, "missing input 'k'", "missing input")
        unknown = typed()
        unknown.outputs.add(name="nosuch")
        expect_error(lambda: stub.ModelInfer(unknown), INVALID, "unknown output 'nosuch'", "unknown output")
        big = typed(x=np.ones((9, 4), np.float32), k=np.ones((9, 4), np.int32))
        expect_error(lambda: stub.ModelInfer(big), INVALID, "max_batch_size 8", "batch over max_batch_size")

        # A full queue: RESOURCE_EXHAUSTED, the rest answered.
        slow = pb.ModelInferRequest(model_name="slow")
        slow.inputs.add(name="x", datatype="FP32", shape=[1, 1]).contents.fp32_contents.append(1.0)
        stub.ModelInfer(slow)
        codes = []

        def call(_):
            try:
                stub.ModelInfer(slow)
                return "OK"
            except grpc.RpcError as e:
                return e.code().name

        with futures.ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(call, range(8)))
        C.ok(set(codes) <= {"OK", "RESOURCE_EXHAUSTED"} and "RESOURCE_EXHAUSTED" in codes and "OK" in codes,
             f"full queue: {codes}")

        check(stub.ModelInfer(typed()), "still serving over gRPC")
        C.ok(s.get("/v2/health/live").status_code == 200, "REST still serving")

        # SIGTERM with calls in flight: each is answered, then exit 0.
        slow.model_name = "slow_q"
        stub.ModelInfer(slow)
        with futures.ThreadPoolExecutor(4) as pool:
            pending = [pool.submit(call, i) for i in range(4)]
            time.sleep(0.1)
            s.proc.send_signal(signal.SIGTERM)
            codes = [p.result(timeout=60) for p in pending]
        C.ok(codes == ["OK"] * 4, f"calls in flight at SIGTERM answered: {codes}")
        C.ok(s.proc.wait(timeout=60) == 0, "clean exit after SIGTERM")
    print(f"serve grpc: {C.count} checks passed")


if __name__ == "__main__":
    main()
