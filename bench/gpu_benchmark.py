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
each in fp32 (TF32 off on both sides), tf32 (Loom use_tf32, torch allow_tf32) and fp16 (Loom's
config precision=fp16, which runs the graph in float16 between a Cast in and a Cast out, with
float32 kept for reductions and the like; torch autocast to float16). PyTorch is timed with CUDA events (median of the timed runs after warm-up), Loom
by `loom bench` (median; each run ends with the device synchronised). With the cuda EP, `loom bench`
runs with --device-io cuda: inputs copied to the GPU once and outputs left there, as torch's timings
with tensors already on the GPU (loom_io "device"; "host" otherwise). speedup_vs_torch_eager =
torch time / Loom time (above 1: Loom is faster). torch.compile rows are added with --compile where
it works on the machine. ResNet-50's batch-128 fp16 run and BERT-base's batch-32 fp16 run are also
profiled (host IO): the device's busy share of the executor's span and the top 10 op types. Batch-1
rows are also timed with enable_cuda_graph (loom_cuda_graph_ms: runs replayed as one CUDA graph,
with host IO: runs on bound device buffers are not recorded).

Correctness is judged against torch in float32 (TF32 off, no autocast) on the same inputs:
loom_vs_fp32_rel_l2 and torch_vs_fp32_rel_l2 (torch at the row's precision), with outputs_rel_l2
(Loom against torch at the same precision) kept for reference. In fp16 / tf32 both sides carry their
own rounding, so comparing them with each other counts it twice: outputs_match is
loom_vs_fp32_rel_l2 <= max(TOLERANCE[precision], 2 * torch_vs_fp32_rel_l2).

  gpu_benchmark.py --bundle DIR --out DIR [--compile] [--quick] [--device cpu --providers cpu_onednn]
Writes OUT/gpu-benchmark.json (card, rows, resnet50_bs128_device_busy_pct, resnet50_bs128_ops,
bert_base_bs32_fp16_profile, ...) and prints a table.
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
# Per precision: the cuda provider options, and the session config's keys. fp16 converts the
# graph to float16 (config "precision": "fp16": activations and weights stay half between ops),
# and the cuda option computes any convolution or product left in float32 on half operands, as
# autocast does.
PRECISIONS = {"fp32": {}, "tf32": {"use_tf32": "1"}, "fp16": {"precision": "fp16"}}
CONFIG_KEYS = {"fp32": {}, "tf32": {}, "fp16": {"precision": "fp16"}}
# Relative L2 of Loom's outputs against torch's float32 outputs (at least twice torch's own distance
# from them at the row's precision: see outputs_match).
TOLERANCE = {"fp32": 1e-3, "tf32": 2e-2, "fp16": 3e-2}
# How long each `loom bench` waits idle after its runs to measure the CPU the process burns meanwhile.
IDLE_MS = 300
# Rows profiled (fp16, host IO) after their timing, and the report keys' prefix.
# At batch 1 the host's launch cost per node shows (ops' total_ms against their kernel_ms).
PROFILED_ROWS = {("resnet50", 128, 224): "resnet50_bs128", ("bert_base", 32, 128): "bert_base_bs32_fp16",
                 ("resnet50", 1, 224): "resnet50_bs1_fp16"}
# Runs of each profiled measurement (and of the same runs without profiling, for its overhead).
PROFILE_RUNS = 10
# Op types of a profiled run kept in the report, and their keys.
PROFILE_TOP_OPS = 10
PROFILE_OP_KEYS = ("op_type", "ep", "calls", "total_ms", "kernel_ms", "device_ms")


def rel_l2(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


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
        self.extra_options = dict(kv.split("=", 1) for kv in a.cuda_option)
        self.last_overhead = {}  # device_busy(): median run with and without --profile
        # `loom bench` on device buffers (--device-io cuda) when Loom runs on the GPU: torch's
        # timings have their inputs on the GPU already. CPU runs keep host IO.
        self.device_io = "cuda" if a.providers.split(",")[0] == "cuda" and self.device.type == "cuda" else None

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
        options = {providers[0]: dict(PRECISIONS[precision], **self.extra_options)} if providers[0] == "cuda" else {}
        if cuda_graph and options:
            options[providers[0]]["enable_cuda_graph"] = "1"
        with open(path, "w") as f:
            json.dump(dict({"providers": providers, "fallback": "allow", "provider_options": options},
                           **CONFIG_KEYS[precision]), f)
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

    def input_files(self, name, inputs, prefix):
        """The model's inputs written as TensorProto files; the `--input NAME=PATH` arguments for them."""
        args = []
        for iname, t in zip(self.models.input_names(name), inputs):
            path = os.path.join(self.work, f"{prefix}_{iname}.pb")
            with open(path, "wb") as f:
                f.write(numpy_helper.from_array(t.numpy(), iname).SerializeToString())
            args += ["--input", f"{iname}={path}"]
        return args

    def row(self, name, module, graph, batch, size, runs, precision, compiled):
        inputs = self.models.example_inputs(name, batch, size=size, seq=size,
                                            generator=torch.Generator().manual_seed(batch * 7 + size))
        args = self.input_files(name, inputs, f"{name}_{batch}_{size}")
        dev_inputs = [t.to(self.device) for t in inputs]

        def set_tf32(on):
            if self.device.type == "cuda":
                torch.backends.cuda.matmul.allow_tf32 = on
                torch.backends.cudnn.allow_tf32 = on

        half = precision == "fp16" and self.device.type == "cuda"

        def forward(m, full_fp32=False):
            with torch.no_grad():
                if not half or full_fp32:
                    return m(*dev_inputs)
                with torch.autocast("cuda", dtype=torch.float16):
                    return m(*dev_inputs)

        def host_outputs(out):
            return [o.float().cpu().numpy() for o in (out if isinstance(out, tuple) else (out,))]

        # The float32 reference (TF32 off, no autocast), then torch at the row's precision (whose
        # TF32 setting stays on for the timing below).
        set_tf32(False)
        ref32 = host_outputs(forward(module, full_fp32=True))
        set_tf32(precision == "tf32")
        ref = ref32 if precision == "fp32" else host_outputs(forward(module))
        r = {"model": name, "batch": batch, "size": size, "precision": precision}
        out_dir = os.path.join(self.work, f"out_{name}_{batch}_{size}_{precision}")
        os.makedirs(out_dir, exist_ok=True)
        cfg = self.config(precision)
        rc, text = self.run([self.loom, "run", "--model", graph, "--config", cfg, "--save-outputs", out_dir,
                             "--quiet"] + args)
        if rc != 0:
            r["error"] = text[-600:]
            return r
        import onnx
        names = ["logits"] if name != "bert_base" else ["last_hidden_state", "pooler_output"]
        vs_torch, loom_vs_fp32, torch_vs_fp32 = [], [], []
        for oname, want, want32 in zip(names, ref, ref32):
            got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out_dir, oname + ".pb")))
            vs_torch.append(rel_l2(got, want))
            loom_vs_fp32.append(rel_l2(got, want32))
            torch_vs_fp32.append(rel_l2(want, want32))
        r["outputs_rel_l2"] = max(vs_torch)  # Loom against torch at the same precision
        r["loom_vs_fp32_rel_l2"] = max(loom_vs_fp32)
        r["torch_vs_fp32_rel_l2"] = max(torch_vs_fp32)
        r["match_tolerance"] = max(TOLERANCE[precision], 2 * r["torch_vs_fp32_rel_l2"])
        r["outputs_match"] = r["loom_vs_fp32_rel_l2"] <= r["match_tolerance"]
        io = ["--device-io", self.device_io] if self.device_io else []
        r["loom_io"] = "device" if self.device_io else "host"
        rc, text = self.run([self.loom, "bench", "--model", graph, "--config", cfg, "--runs", str(runs), "--warmup",
                             "3", "--json", "--idle-ms", str(IDLE_MS)] + io + args)
        try:
            j = json.loads(text[text.index("{"):])
            if j.get("device_io") != self.device_io:
                raise ValueError(f"loom bench reports device_io {j.get('device_io')!r}, expected {self.device_io!r}")
            r["loom_ms"] = j["median_ms"]
            r["loom_create_ms"] = j.get("create_ms")
            # The process's CPU use while the session sits idle after the runs
            # (the target: under 5 % of one core, no thread spinning).
            r["loom_idle_cpu_pct_of_one_core"] = j.get("idle_cpu_pct_of_one_core")
            # Host CPU per run (all threads) against the run's wall time.
            if j.get("cpu_ms") is not None and j["median_ms"] > 0:
                r["loom_cpu_ms_per_run"] = j["cpu_ms"]
                r["loom_cpu_pct_of_one_core"] = 100.0 * j["cpu_ms"] / j["mean_ms" if "mean_ms" in j else "median_ms"]
        except Exception as e:
            r["error"] = f"{e!r}"[:200] + "\n" + text[-600:]
            return r
        r["torch_eager_ms"] = self.torch_time(lambda: forward(module), runs)
        r["speedup_vs_torch_eager"] = r["torch_eager_ms"] / r["loom_ms"]
        if batch == 1 and self.a.providers.split(",")[0] == "cuda":
            # The same runs replayed as a CUDA graph (the batch-1 latency target), with host IO:
            # runs on bound device buffers are not recorded and replayed.
            r["loom_cuda_graph_io"] = "host"
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

    def device_busy(self, name, graph, batch, size, precision="fp16"):
        """Profiled runs (host IO): (device busy over the executor's span in percent, the summary's
        aggregate median, its top PROFILE_TOP_OPS op types by total time)."""
        inputs = self.models.example_inputs(name, batch, size=size, seq=size)
        args = self.input_files(name, inputs, f"profile_{name}")
        trace = os.path.join(self.work, f"profile_{name}_{batch}_{size}_{precision}.json")
        if os.path.exists(trace):
            os.remove(trace)  # a failed run must not leave an older trace to summarize
        # The same runs with and without profiling: what profiling adds to a run on the GPU.
        timed = {}
        for label, extra in (("plain", []), ("profiled", ["--profile", trace])):
            rc, text = self.run([self.loom, "bench", "--model", graph, "--config", self.config(precision), "--runs",
                                 str(PROFILE_RUNS), "--warmup", "2", "--json"] + extra + args)
            try:
                timed[label] = json.loads(text[text.index("{"):])["median_ms"]
            except Exception:
                timed[label] = None
        self.last_overhead = {"plain_ms": timed["plain"], "profiled_ms": timed["profiled"], "runs": PROFILE_RUNS}
        if timed["plain"] and timed["profiled"]:
            self.last_overhead["overhead_pct"] = 100.0 * (timed["profiled"] / timed["plain"] - 1.0)
        rc, text = self.run([self.loom, "profile", "summarize", trace, "--json", "--top", str(PROFILE_TOP_OPS)])
        try:
            summary = json.loads(text[text.index("{"):])
        except Exception:
            return None, {"error": text[-500:]}, []
        # ops: op types by total step time, longest first; device_ms only when the trace has device spans.
        ops = [{k: o.get(k) for k in PROFILE_OP_KEYS} for o in (summary.get("ops") or [])[:PROFILE_TOP_OPS]]
        agg = (summary.get("aggregate") or {}).get("median", {})
        try:
            return 100.0 * agg["device_busy_ms"] / agg["executor_ms"], agg, ops
        except Exception:
            return None, agg or {"error": "no aggregate device_busy_ms / executor_ms: " + text[-500:]}, ops


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
    p.add_argument("--only", default="",
                   help="run only these rows, MODEL:BATCH:SIZE[,...] (e.g. resnet50:128:224)")
    p.add_argument("--cuda-option", action="append", default=[],
                   help="KEY=VALUE added to the cuda provider options of every row (repeatable), e.g. "
                        "conv_algo_search=exhaustive; recorded as cuda_options")
    p.add_argument("--deadline-s", type=float, default=0,
                   help="start no new row after this many seconds (0: no limit); the rows left are listed")
    a = p.parse_args()
    b = Bench(a)
    report = {"date": datetime.date.today().isoformat(), "rows": []}
    if b.device.type == "cuda":
        report["card"] = torch.cuda.get_device_name()
    report["torch"] = torch.__version__
    rows = QUICK_ROWS if a.quick else FULL_ROWS
    if a.only:
        wanted = {tuple(x.split(":")) for x in a.only.split(",")}
        rows = [r for r in rows if (r[0], str(r[1]), str(r[2])) in wanted]
    report["cuda_options"] = b.extra_options
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
        key = PROFILED_ROWS.get((m, batch, size))
        if key and b.device.type == "cuda":
            busy, detail, ops = b.device_busy(m, graphs[m], batch, size)
            report["profile_io"] = "host"
            report[key + "_device_busy_pct"] = busy
            report[key + "_profile"] = detail
            report[key + "_ops"] = ops
            report[key + "_profile_overhead"] = b.last_overhead
            save()
    if skipped:
        report["skipped_past_deadline"] = skipped
    save()
    print(f"\ncard: {report.get('card', a.device)}  torch {report['torch']}")
    print(f"{'model':<12}{'batch':>6}{'size':>6} {'prec':<5}{'loom ms':>10}{'graph ms':>10}{'torch ms':>10}"
          f"{'speedup':>9}{'vs fp32':>10}{'idle cpu%':>10}  match")
    for r in report["rows"]:
        print(f"{r['model']:<12}{r['batch']:>6}{r['size']:>6} {r['precision']:<5}{r.get('loom_ms', float('nan')):>10.3f}"
              f"{r.get('loom_cuda_graph_ms', float('nan')):>10.3f}"
              f"{r.get('torch_eager_ms', float('nan')):>10.3f}{r.get('speedup_vs_torch_eager', float('nan')):>9.2f}"
              f"{r.get('loom_vs_fp32_rel_l2', float('nan')):>10.2e}"
              f"{(r.get('loom_idle_cpu_pct_of_one_core') if r.get('loom_idle_cpu_pct_of_one_core') is not None else float('nan')):>10.2f}  "
              f"{r.get('outputs_match', r.get('error', '')[:60])}")
    if "resnet50_bs128_device_busy_pct" in report:
        print(f"resnet50 bs128 device busy: {report['resnet50_bs128_device_busy_pct']}%; profiling overhead "
              f"{report.get('resnet50_bs128_profile_overhead', {}).get('overhead_pct')}%")
    if "bert_base_bs32_fp16_device_busy_pct" in report:
        print(f"bert_base bs32 fp16 device busy: {report['bert_base_bs32_fp16_device_busy_pct']}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
