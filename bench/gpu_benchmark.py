#!/usr/bin/env python3
"""Loom's cuda EP against PyTorch on the same GPU, in one run: same architectures, same weights,
same inputs, outputs compared before anything is timed (issue 28).

Runs on the GPU machine from the bundle scripts/gpu_bundle.sh makes (bin/loom there, the models'
graphs in models/bench/): for each model the torch module is built there, its BatchNorm calibrated on
random batches, and its weights written into the ONNX graph (bench/gpu/models.py), so both sides run
the same numbers. Rows:
  ResNet-50   batch 1 and 128, 224x224 and 512x512
  MobileNetV2 batch 1 and 128, 224x224
  BERT-base   seq 128, batch 1 and 32
each in fp32 (TF32 off on both sides), tf32 (Loom use_tf32, torch allow_tf32) and fp16 (Loom
precision=fp16, torch autocast to float16: both compute convolutions and products in float16 with
float32 elsewhere). PyTorch is timed with CUDA events (median of the timed runs after warm-up), Loom
by `loom bench` (median; each run ends with the device synchronised). speedup_vs_torch_eager =
torch time / Loom time (above 1: Loom is faster). torch.compile rows are added with --compile where
it works on the machine. ResNet-50's batch-128 fp16 run is also profiled: the device's busy share of
the executor's span. Batch-1 rows are also timed with enable_cuda_graph (loom_cuda_graph_ms: runs
replayed as one CUDA graph).

  gpu_benchmark.py --bundle DIR --out DIR [--compile] [--quick] [--device cpu --providers cpu_onednn]
Writes OUT/gpu-benchmark.json (card, rows, resnet50_bs128_device_busy_pct) and prints a table.
--quick runs tiny sizes (a smoke test, also on a CPU with --device cpu).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# (model, batch, image size or seq, runs), in the order they are run: the rows the issue's
# targets name first, so a run cut short by --deadline-s still answers them.
FULL_ROWS = [("resnet50", 128, 224, 10), ("resnet50", 1, 224, 50), ("bert_base", 32, 128, 10),
             ("bert_base", 1, 128, 50), ("mobilenetv2", 1, 224, 50), ("mobilenetv2", 128, 224, 10),
             ("resnet50", 1, 512, 30), ("resnet50", 128, 512, 5)]
# Precisions in the order they are run (the targets are fp16 and tf32 first).
PRECISION_ORDER = ("fp16", "tf32", "fp32")
QUICK_ROWS = [("resnet50", 1, 64, 3), ("resnet50", 2, 64, 3), ("mobilenetv2", 2, 64, 3), ("bert_base", 2, 16, 3)]
PRECISIONS = {"fp32": {}, "tf32": {"use_tf32": "1"}, "fp16": {"precision": "fp16"}}
TOLERANCE = {"fp32": 1e-3, "tf32": 2e-2, "fp16": 3e-2}  # relative L2 of the outputs, Loom against torch


def load_models_module(bundle):
    for candidate in (os.path.join(bundle, "tools"), os.path.join(HERE, "gpu")):
        if os.path.exists(os.path.join(candidate, "models.py")):
            sys.path.insert(0, candidate)
            break
    import models
    return models


class Bench:
    def __init__(self, a):
        self.a = a
        self.loom = os.path.join(a.bundle, "bin", "loom") if os.path.exists(os.path.join(a.bundle, "bin", "loom")) \
            else a.loom
        self.env = dict(os.environ)
        self.env["LD_LIBRARY_PATH"] = os.path.join(a.bundle, "lib") + ":" + self.env.get("LD_LIBRARY_PATH", "")
        self.work = a.work
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(a.out, exist_ok=True)
        self.models = load_models_module(a.bundle)
        self.device = torch.device(a.device)

    def log(self, text):
        with open(os.path.join(self.a.out, "gpu-benchmark.log"), "a") as f:
            f.write(text + "\n")

    def run(self, cmd, timeout=150):
        """(exit code, output); a command past `timeout` seconds is killed and reported as rc -9."""
        start = time.time()
        try:
            p = subprocess.run(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout, errors="replace")
            rc, text = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.output or ""
            rc, text = -9, (out.decode(errors="replace") if isinstance(out, bytes) else out) + \
                f"\n[killed after {timeout} s]"
        self.log("$ " + " ".join(cmd) + f"\n[rc {rc}, {time.time() - start:.1f} s]\n" + text[-4000:])
        return rc, text

    def prepare(self, name):
        """The torch module on the device and the ONNX graph with its weights."""
        src = os.path.join(self.a.bundle, "models", "bench", name + ".onnx")
        restored = os.path.join(self.work, name + ".restored.onnx")
        synced = os.path.join(self.work, name + ".onnx")
        tool = os.path.join(self.a.bundle, "tools", "model_weights.py")
        if not os.path.exists(tool):
            tool = os.path.join(HERE, "..", "scripts", "gpu", "tools", "model_weights.py")
        self.run([sys.executable, tool, "restore", src, restored])
        module = self.models.build(name).to(self.device)
        self.models.calibrate(name, module, self.device)
        self.models.write_weights(name, module, restored, synced)
        return module, synced

    def config(self, precision, cuda_graph=False):
        path = os.path.join(self.work, f"loom_{precision}{'_graph' if cuda_graph else ''}.json")
        providers = self.a.providers.split(",")
        options = {providers[0]: dict(PRECISIONS[precision])} if providers[0] == "cuda" else {}
        if cuda_graph and options:
            options[providers[0]]["enable_cuda_graph"] = "1"
        with open(path, "w") as f:
            json.dump({"providers": providers, "fallback": "allow", "provider_options": options}, f)
        return path

    def torch_time(self, fn, runs, warmup=3):
        for _ in range(warmup):
            fn()
        if self.device.type != "cuda":
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1e3)
            return float(np.median(times))
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return float(np.median(times))

    def row(self, name, module, graph, batch, size, runs, precision, compiled):
        inputs = self.models.example_inputs(name, batch, size=size, seq=size,
                                            generator=torch.Generator().manual_seed(batch * 7 + size))
        args = []
        for iname, t in zip(self.models.input_names(name), inputs):
            path = os.path.join(self.work, f"{name}_{batch}_{size}_{iname}.pb")
            with open(path, "wb") as f:
                f.write(numpy_helper.from_array(t.numpy(), iname).SerializeToString())
            args += ["--input", f"{iname}={path}"]
        dev_inputs = [t.to(self.device) for t in inputs]
        use_tf32 = precision == "tf32"
        if self.device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = use_tf32
            torch.backends.cudnn.allow_tf32 = use_tf32

        half = precision == "fp16" and self.device.type == "cuda"

        def forward(m):
            with torch.no_grad():
                if not half:
                    return m(*dev_inputs)
                with torch.autocast("cuda", dtype=torch.float16):
                    return m(*dev_inputs)

        ref = forward(module)
        ref = [r.float().cpu().numpy() for r in (ref if isinstance(ref, tuple) else (ref,))]
        r = {"model": name, "batch": batch, "size": size, "precision": precision}
        out_dir = os.path.join(self.work, f"out_{name}_{batch}_{size}_{precision}")
        os.makedirs(out_dir, exist_ok=True)
        cfg = self.config(precision)
        rc, text = self.run([self.loom, "run", "--model", graph, "--config", cfg, "--save-outputs", out_dir,
                             "--quiet"] + args)
        if rc != 0:
            r["error"] = text[-600:]
            return r
        errors = []
        names = ["logits"] if name != "bert_base" else ["last_hidden_state", "pooler_output"]
        for oname, want in zip(names, ref):
            import onnx
            got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out_dir, oname + ".pb"))).astype(np.float64)
            want = want.astype(np.float64)
            errors.append(float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)))
        r["outputs_rel_l2"] = max(errors)
        r["outputs_match"] = r["outputs_rel_l2"] <= TOLERANCE[precision]
        rc, text = self.run([self.loom, "bench", "--model", graph, "--config", cfg, "--runs", str(runs), "--warmup",
                             "3", "--json"] + args)
        try:
            j = json.loads(text[text.index("{"):])
            r["loom_ms"] = j["median_ms"]
            r["loom_create_ms"] = j.get("create_ms")
            # Host CPU per run (all threads) against the run's wall time: the
            # target is under 5 % of one core for a GPU-only model.
            if j.get("cpu_ms") is not None and j["median_ms"] > 0:
                r["loom_cpu_ms_per_run"] = j["cpu_ms"]
                r["loom_cpu_pct_of_one_core"] = 100.0 * j["cpu_ms"] / j["mean_ms" if "mean_ms" in j else "median_ms"]
        except Exception:
            r["error"] = text[-600:]
            return r
        r["torch_eager_ms"] = self.torch_time(lambda: forward(module), runs)
        r["speedup_vs_torch_eager"] = r["torch_eager_ms"] / r["loom_ms"]
        if batch == 1 and self.a.providers.split(",")[0] == "cuda":
            # The same runs replayed as a CUDA graph (the batch-1 latency target).
            rc, text = self.run([self.loom, "bench", "--model", graph, "--config", self.config(precision, True),
                                 "--runs", str(runs), "--warmup", "3", "--json"] + args)
            try:
                r["loom_cuda_graph_ms"] = json.loads(text[text.index("{"):])["median_ms"]
                r["speedup_vs_torch_eager_cuda_graph"] = r["torch_eager_ms"] / r["loom_cuda_graph_ms"]
            except Exception:
                r["cuda_graph_error"] = text[-600:]
        if compiled is not None:
            try:
                r["torch_compile_ms"] = self.torch_time(lambda: forward(compiled), runs)
                r["speedup_vs_torch_compile"] = r["torch_compile_ms"] / r["loom_ms"]
            except Exception as e:  # torch.compile may not work on every machine
                r["torch_compile_error"] = repr(e)[:300]
        return r

    def device_busy(self, graph, batch, size):
        """Profiled ResNet-50 runs (fp16): device busy over the executor's span, in percent."""
        name = "resnet50"
        inputs = self.models.example_inputs(name, batch, size=size)
        path = os.path.join(self.work, "profile_input.pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(inputs[0].numpy(), "input").SerializeToString())
        trace = os.path.join(self.work, "profile.json")
        self.run([self.loom, "bench", "--model", graph, "--config", self.config("fp16"), "--runs", "5", "--warmup", "2",
                  "--input", f"input={path}", "--profile", trace])
        rc, text = self.run([self.loom, "profile", "summarize", trace, "--json"])
        try:
            agg = (json.loads(text[text.index("{"):]).get("aggregate") or {}).get("median", {})
            return 100.0 * agg["device_busy_ms"] / agg["executor_ms"], agg
        except Exception:
            return None, {"error": text[-500:]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", default=os.path.join(HERE, ".."))
    p.add_argument("--out", required=True)
    p.add_argument("--work", default="/tmp/loom_gpu_benchmark")
    p.add_argument("--loom", default="build/bin/loom")
    p.add_argument("--device", default="cuda")
    p.add_argument("--providers", default="cuda")
    p.add_argument("--precisions", default="fp32,tf32,fp16")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--deadline-s", type=float, default=0,
                   help="start no new row after this many seconds (0: no limit); the rows left are listed")
    a = p.parse_args()
    b = Bench(a)
    report = {"date": datetime.date.today().isoformat(), "rows": []}
    if b.device.type == "cuda":
        report["card"] = torch.cuda.get_device_name()
    report["torch"] = torch.__version__
    rows = QUICK_ROWS if a.quick else FULL_ROWS
    out_path = os.path.join(a.out, "gpu-benchmark.json")

    def save():
        # After every row, so a run stopped at its time limit keeps what it measured.
        with open(out_path, "w") as f:
            json.dump(report, f, indent=1)

    started = time.time()
    precisions = [p for p in PRECISION_ORDER if p in a.precisions.split(",")]
    modules, graphs, compiled = {}, {}, {}
    for name in dict.fromkeys(r[0] for r in rows):
        modules[name], graphs[name] = b.prepare(name)
        compiled[name] = torch.compile(modules[name]) if a.compile else None
    skipped = []
    for m, batch, size, runs in rows:
        for precision in precisions:
            if a.deadline_s and time.time() - started > a.deadline_s:
                skipped.append(f"{m} {batch} {size} {precision}")
                continue
            r = b.row(m, modules[m], graphs[m], batch, size, runs, precision, compiled[m])
            report["rows"].append(r)
            print(json.dumps(r), flush=True)
            save()
        if (m, batch, size) == ("resnet50", 128, 224) and b.device.type == "cuda":
            busy, detail = b.device_busy(graphs["resnet50"], 128, 224)
            report["resnet50_bs128_device_busy_pct"] = busy
            report["resnet50_bs128_profile"] = detail
            save()
    if skipped:
        report["skipped_past_deadline"] = skipped
    save()
    print(f"\ncard: {report.get('card', a.device)}  torch {report['torch']}")
    print(f"{'model':<12}{'batch':>6}{'size':>6} {'prec':<5}{'loom ms':>10}{'graph ms':>10}{'torch ms':>10}"
          f"{'speedup':>9}  match")
    for r in report["rows"]:
        print(f"{r['model']:<12}{r['batch']:>6}{r['size']:>6} {r['precision']:<5}{r.get('loom_ms', float('nan')):>10.3f}"
              f"{r.get('loom_cuda_graph_ms', float('nan')):>10.3f}"
              f"{r.get('torch_eager_ms', float('nan')):>10.3f}{r.get('speedup_vs_torch_eager', float('nan')):>9.2f}  "
              f"{r.get('outputs_match', r.get('error', '')[:60])}")
    if "resnet50_bs128_device_busy_pct" in report:
        print(f"resnet50 bs128 device busy: {report['resnet50_bs128_device_busy_pct']}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
