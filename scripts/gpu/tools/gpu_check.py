#!/usr/bin/env python3
"""The GPU check of the CUDA EP (run by gpu_check.sh from the bundle; see scripts/gpu_bundle.sh).

Steps, each bounded in time, each result kept even when a later step fails:
  card      nvidia-smi: the card, driver and memory
  loader    `loom plugins`: does the cuda plugin find the CUDA libraries by itself (system
            loader, LD_LIBRARY_PATH, the nvidia/*/lib folders of Python wheels)? If not, the
            wheels' folders are named in LOOM_CUDA_LIBRARY_PATH for the rest, and that is reported.
  ep_tests  the EP-vs-reference suite (loom_cuda_ep_tests), one process per test suite so a
            crash loses one suite, with LOOM_CUDA_POISON=1 (fresh device memory is NaN bytes)
  node      the ONNX backend node tests whose nodes the EP claims (--providers cuda,reference)
  models    each bundled model on cuda (with reference fallback) against the reference EP
            alone, same seeded random inputs: relative L2 error of every output
  timing    `loom bench` medians on cuda, batch 1 (a first table; the benchmark proper is
            bench/gpu_benchmark.py)
  profile   ResNet-50 profiled on cuda: `loom profile summarize` (device busy from CUDA events)
            and the timeline SVG
Writes OUT/gpu-check.json (card, ep_tests_passed/failed, node_tests_passed/failed,
models_matched/total and the details) and logs, and prints a table last.
"""
import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

# name, file in the bundle, `loom run` extra args, relative L2 tolerance
MODELS = [
    ("resnet50", "models/resnet50.onnx", [], 1e-3),
    ("mobilenetv2", "models/mobilenetv2.onnx", [], 1e-3),
    ("bert_encoder seq 32", "models/bert_encoder.onnx", ["--dim", "seq=32"], 1e-3),
    ("bert_encoder seq 77", "models/bert_encoder.onnx", ["--dim", "seq=77"], 1e-3),
    ("ppocr_det 320x320", "models/ch_PP-OCRv4_det_infer.onnx",
     ["--dim", "p2o.DynamicDimension.1=320", "--dim", "p2o.DynamicDimension.2=320"], 1e-3),
    ("ppocr_rec 48x320", "models/ch_PP-OCRv4_rec_infer.onnx", ["--dim", "p2o.DynamicDimension.1=320"], 1e-3),
]
# The outputs that judge a model's fp16 mode, where not all: the detector's
# probabilities saturate near 0 on random input (their relative error says
# little), so its logits judge it, as the models tests compare them.
FP16_JUDGED_BY = {"ppocr_det 320x320": ["p2o.Add.281.pb"]}
FP16_TOL = 1e-2  # relative L2 of fp16-mode outputs against the float32 reference
BENCH = ["resnet50", "mobilenetv2", "bert_encoder seq 32", "ppocr_det 320x320", "ppocr_rec 48x320"]


class Checker:
    def __init__(self, bundle, out, quick):
        self.bundle = bundle
        self.out = out
        self.quick = quick
        self.work = "/tmp/loom_gpu_check"
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ)
        self.env["LD_LIBRARY_PATH"] = os.path.join(bundle, "lib") + ":" + self.env.get("LD_LIBRARY_PATH", "")
        self.report = {"date": datetime.date.today().isoformat(), "started": time.time()}
        manifest = os.path.join(bundle, "MANIFEST.json")
        if os.path.exists(manifest):
            with open(manifest) as f:
                self.report["bundle"] = json.load(f)

    def log_path(self, name):
        return os.path.join(self.out, name)

    def run(self, cmd, timeout, log=None, env=None):
        start = time.time()
        try:
            p = subprocess.run(cmd, env=env or self.env, timeout=timeout, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace")
            rc, text = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, text = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        if log:
            with open(self.log_path(log), "a") as f:
                f.write("$ " + " ".join(cmd) + f"\n[rc {rc}, {time.time() - start:.1f} s]\n" + text + "\n")
        return rc, text

    def bin(self, name):
        return os.path.join(self.bundle, "bin", name)

    # --- steps ---

    def card(self):
        rc, text = self.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], 30)
        self.report["card"] = text.strip().splitlines()[0] if rc == 0 and text.strip() else "unknown (" + text.strip()[:200] + ")"

    def cuda_available(self, env):
        rc, text = self.run([self.bin("loom"), "plugins"], 60, "loader.log", env)
        m = re.search(r"factory cuda(.*)\n(.*)", text)
        ok = bool(m) and "unavailable" not in m.group(1) and m.group(2).strip().startswith("device")
        return ok, (m.group(0) if m else text[-600:])

    def loader(self):
        ok, line = self.cuda_available(self.env)
        info = {"found_libraries_itself": ok, "plugins_line": line}
        if not ok:
            dirs = sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "*", "lib")))
            self.env["LOOM_CUDA_LIBRARY_PATH"] = ":".join(dirs)
            self.env["LD_LIBRARY_PATH"] = ":".join(dirs) + ":" + self.env["LD_LIBRARY_PATH"]
            ok2, line2 = self.cuda_available(self.env)
            info.update({"with_wheel_dirs": ok2, "wheel_dirs": dirs, "plugins_line_with_dirs": line2})
        self.report["loader"] = info

    def ep_tests(self):
        env = dict(self.env, LOOM_CUDA_POISON="1")
        rc, listing = self.run([self.bin("loom_cuda_ep_tests"), "--gtest_list_tests"], 60, "ep_tests.log", env)
        suites = [l.rstrip(".") for l in listing.splitlines() if l and not l.startswith(" ") and l.endswith(".")]
        passed, failed, skipped, failures, crashed = 0, 0, 0, [], []
        # One process for everything; only if it dies, one process per suite,
        # so a crash loses a single suite.
        whole = os.path.join(self.work, "ep_all.json")
        if os.path.exists(whole):
            os.remove(whole)
        rc, text = self.run([self.bin("loom_cuda_ep_tests"), f"--gtest_output=json:{whole}"], 150, "ep_tests.log", env)
        runs = [whole] if os.path.exists(whole) else []
        for suite in ([] if runs else suites):
            xml = os.path.join(self.work, f"ep_{suite}.json")
            if os.path.exists(xml):
                os.remove(xml)
            rc, text = self.run([self.bin("loom_cuda_ep_tests"), f"--gtest_filter={suite}.*",
                                 f"--gtest_output=json:{xml}"], 150 if not self.quick else 60, "ep_tests.log", env)
            if not os.path.exists(xml):
                crashed.append({"suite": suite, "rc": rc, "tail": text[-1500:]})
                failed += 1
                continue
            runs.append(xml)
        for xml in runs:
            with open(xml) as f:
                data = json.load(f)
            for ts in data.get("testsuites", []):
                for tc in ts.get("testsuite", []):
                    name = f"{ts['name']}.{tc['name']}"
                    if "device_mib_lost_over_100_sessions" in tc:
                        self.report["device_mib_lost_over_100_sessions"] = float(
                            tc["device_mib_lost_over_100_sessions"])
                    if tc.get("result") == "SKIPPED" or tc.get("status") == "NOTRUN":
                        skipped += 1
                    elif tc.get("failures"):
                        failed += 1
                        msgs = [x.get("failure", "")[:700] for x in tc["failures"][:4]]
                        failures.append({"test": name, "messages": msgs})
                    else:
                        passed += 1
        self.report.update({"ep_tests_passed": passed, "ep_tests_failed": failed, "ep_tests_skipped": skipped,
                            "ep_failures": failures, "ep_crashed_suites": crashed})

    def node_suite(self):
        """The bundle's node tests, unpacked into the work folder when they come packed."""
        packed = os.path.join(self.bundle, "node.tar.xz")
        if not os.path.exists(packed):
            return os.path.join(self.bundle, "node")
        suite = os.path.join(self.work, "node")
        if not os.path.isdir(suite):
            subprocess.run(["tar", "-C", self.work, "-xJf", packed], check=True)
        return suite

    def node_tests(self):
        args = [self.bin("loom_conformance"), "--suite", self.node_suite(),
                "--providers", "cuda,reference", "--require-provider", "cuda"]
        for e in sorted(glob.glob(os.path.join(self.bundle, "expectations", "*.txt"))):
            args += ["--expectations", e]
        rc, text = self.run(args, 100, "node_tests.log")
        m = re.search(r"(\d+) passed, (\d+) failed", text)
        nc = re.search(r"(\d+) not claimed", text)
        unexpected = [l for l in text.splitlines() if l.startswith(("UNEXPECTED", "STALE"))]
        self.report.update({"node_tests_passed": int(m.group(1)) if m else 0,
                            "node_tests_failed": int(m.group(2)) if m else -1,
                            "node_tests_not_claimed": int(nc.group(1)) if nc else -1,
                            "node_unexpected": unexpected[:200], "node_rc": rc})

    def model_path(self, rel):
        src = os.path.join(self.bundle, rel)
        with open(src, "rb") as f:
            needs_restore = b"loom-recipe " in f.read()
        if not needs_restore:
            return src
        dst = os.path.join(self.work, os.path.basename(rel))
        if not os.path.exists(dst):
            self.run([sys.executable, os.path.join(self.bundle, "tools", "model_weights.py"), "restore", src, dst],
                     300, "models.log")
        return dst

    @staticmethod
    def read_outputs(folder):
        out = {}
        for p in sorted(glob.glob(os.path.join(folder, "*.pb"))):
            t = onnx.TensorProto()
            with open(p, "rb") as f:
                t.ParseFromString(f.read())
            out[os.path.basename(p)] = numpy_helper.to_array(t)
        return out

    def fp16_config(self):
        path = os.path.join(self.work, "fp16.json")
        with open(path, "w") as f:
            json.dump({"providers": ["cuda", "reference"], "provider_options": {"cuda": {"precision": "fp16"}}}, f)
        return path

    def fp16_graph_config(self):
        """Config precision fp16: the graph itself converted to float16 (activations stay half)."""
        path = os.path.join(self.work, "fp16_graph.json")
        with open(path, "w") as f:
            json.dump({"providers": ["cuda", "reference"], "precision": "fp16"}, f)
        return path

    def graph_config(self):
        path = os.path.join(self.work, "cuda_graph.json")
        with open(path, "w") as f:
            json.dump({"providers": ["cuda", "reference"],
                       "provider_options": {"cuda": {"enable_cuda_graph": "1"}}}, f)
        return path

    @staticmethod
    def compare(got_outputs, reference_outputs):
        errors = {}
        for k, ref in reference_outputs.items():
            got = got_outputs.get(k)
            if got is None or got.shape != ref.shape:
                errors[k] = "missing or shape " + (str(got.shape) if got is not None else "none")
                continue
            a, b = got.astype(np.float64), ref.astype(np.float64)
            nan_mismatch = bool(np.any(np.isnan(a) != np.isnan(b)))
            a, b = np.nan_to_num(a), np.nan_to_num(b)
            rel_l2 = float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
            errors[k] = {"rel_l2": rel_l2, "max_abs": float(np.max(np.abs(a - b))) if a.size else 0.0,
                         "nan_mismatch": nan_mismatch}
        return errors

    @staticmethod
    def within(errors, reference_outputs, tol):
        return bool(reference_outputs) and all(
            isinstance(e, dict) and e["rel_l2"] <= tol and not e["nan_mismatch"] for e in errors.values())

    def models(self):
        results = []
        for name, rel, extra, tol in MODELS:
            r = {"model": name}
            try:
                path = self.model_path(rel)
                slug = re.sub(r"[^A-Za-z0-9]+", "_", name)
                rc, text = self.run([self.bin("loom"), "partition", "--model", path, "--providers", "cuda,reference"],
                                    120, "models.log")
                r["partition_rc"] = rc
                r["placement"] = dict(re.findall(r"^  (\w+): (\d+) node\(s\)", text, re.M))
                # Nodes left to the host, with why (cuda's own reason is in the line).
                r["host_nodes"] = [l.strip()[:300] for l in text.splitlines() if "] -> reference:" in l][:60]
                if rc != 0:
                    r["partition_error"] = text[-1500:]
                outs = {}
                runs = (("cuda", ["--providers", "cuda,reference"]), ("reference", ["--providers", "reference"]),
                        ("cuda_fp16", ["--config", self.fp16_config()]),
                        ("cuda_fp16_graph", ["--config", self.fp16_graph_config()]))
                for label, how in runs:
                    folder = os.path.join(self.work, slug, label)
                    os.makedirs(folder, exist_ok=True)
                    for p in glob.glob(os.path.join(folder, "*.pb")):
                        os.remove(p)
                    rc, text = self.run([self.bin("loom"), "run", "--model", path, "--save-outputs", folder, "--quiet"]
                                        + how + extra, 300, "models.log")
                    r[label + "_rc"] = rc
                    if rc != 0:
                        r[label + "_error"] = text[-1500:]
                    outs[label] = self.read_outputs(folder)
                on_cuda = int(r["placement"].get("cuda", 0))
                r["outputs"] = self.compare(outs["cuda"], outs["reference"])
                r["matched"] = on_cuda > 0 and self.within(r["outputs"], outs["reference"], tol)
                # fp16 mode: float16 convolutions and products, float32 I/O.
                r["fp16_outputs"] = self.compare(outs["cuda_fp16"], outs["reference"])
                judged = FP16_JUDGED_BY.get(name)
                judged_errors = {k: e for k, e in r["fp16_outputs"].items() if not judged or k in judged}
                r["fp16_judged_by"] = sorted(judged_errors)
                r["fp16_matched"] = on_cuda > 0 and self.within(judged_errors, outs["reference"], FP16_TOL)
                # Config precision fp16: the whole graph in float16, judged the same way.
                r["fp16_graph_outputs"] = self.compare(outs["cuda_fp16_graph"], outs["reference"])
                graph_errors = {k: e for k, e in r["fp16_graph_outputs"].items() if not judged or k in judged}
                r["fp16_graph_matched"] = on_cuda > 0 and self.within(graph_errors, outs["reference"], FP16_TOL)
                if on_cuda == 0:
                    r["exception"] = "no node placed on cuda"
            except Exception as e:  # a broken model must not end the check
                r["matched"] = False
                r["exception"] = repr(e)
            results.append(r)
            print(f"model {name}: {'match' if r.get('matched') else 'MISMATCH'}", flush=True)
        self.report["models"] = results
        self.report["models_total"] = len(results)
        self.report["models_matched"] = sum(1 for r in results if r.get("matched"))
        self.report["fp16_models_matched"] = sum(1 for r in results if r.get("fp16_matched"))
        self.report["fp16_graph_models_matched"] = sum(1 for r in results if r.get("fp16_graph_matched"))

    def timing(self):
        rows = []
        for name, rel, extra, _ in MODELS:
            if name not in BENCH:
                continue
            path = self.model_path(rel)
            rc, text = self.run([self.bin("loom"), "bench", "--model", path, "--providers", "cuda,reference",
                                 "--runs", "30", "--warmup", "5", "--json"] + extra, 20, "timing.log")
            row = {"model": name, "batch": 1}
            try:
                j = json.loads(text[text.index("{"):])
                row.update({k: j.get(k) for k in ("median_ms", "p90_ms", "min_ms", "create_ms", "first_run_ms",
                                                 "nodes_per_provider")})
            except Exception:
                row["error"] = text[-500:]
            # The same runs replayed as a CUDA graph (where the plan allows it).
            rc, text = self.run([self.bin("loom"), "bench", "--model", path, "--config", self.graph_config(),
                                 "--runs", "30", "--warmup", "5", "--json"] + extra, 20, "timing.log")
            try:
                row["cuda_graph_median_ms"] = json.loads(text[text.index("{"):]).get("median_ms")
            except Exception:
                row["cuda_graph_error"] = text[-300:]
            rows.append(row)
        self.report["timing"] = rows

    def profile(self):
        """ResNet-50 profiled on cuda: do the device lanes come back (GPU time from CUDA events)?"""
        trace = os.path.join(self.work, "profile.json")
        path = self.model_path("models/resnet50.onnx")
        rc, text = self.run([self.bin("loom"), "bench", "--model", path, "--providers", "cuda,reference", "--runs", "5",
                             "--warmup", "2", "--profile", trace], 60, "timing.log")
        info = {"rc": rc}
        rc, text = self.run([self.bin("loom"), "profile", "summarize", trace, "--json"], 60, "timing.log")
        try:
            summary = json.loads(text[text.index("{"):])
            info["has_device"] = summary.get("has_device")
            aggregate = summary.get("aggregate") or {}
            info["median"] = aggregate.get("median", {})
        except Exception:
            info["error"] = text[-800:]
        self.run([self.bin("loom"), "profile", "timeline", trace, "--svg", self.log_path("resnet50_timeline.svg")],
                 60, "timing.log")
        self.report["profile_resnet50"] = info

    def finish(self):
        self.report["duration_s"] = round(time.time() - self.report.pop("started"), 1)
        with open(self.log_path("gpu-check.json"), "w") as f:
            json.dump(self.report, f, indent=1)
        partial = self.log_path("gpu-check.partial.json")
        if os.path.exists(partial):
            os.remove(partial)
        r = self.report
        print("\n=== gpu check ===")
        print(f"card: {r.get('card')}")
        print(f"loader: {r.get('loader', {}).get('found_libraries_itself')} "
              f"(with wheel dirs: {r.get('loader', {}).get('with_wheel_dirs', '-')})")
        print(f"ep tests: {r.get('ep_tests_passed')} passed, {r.get('ep_tests_failed')} failed, "
              f"{r.get('ep_tests_skipped')} skipped; crashed suites: {[c['suite'] for c in r.get('ep_crashed_suites', [])]}")
        for f in r.get("ep_failures", [])[:15]:
            print(f"  FAIL {f['test']}: {(f['messages'][0] if f['messages'] else '')[:300]}")
        print(f"node tests: {r.get('node_tests_passed')} passed, {r.get('node_tests_failed')} failed, "
              f"{r.get('node_tests_not_claimed')} not claimed; unexpected: {len(r.get('node_unexpected', []))}")
        for l in r.get("node_unexpected", [])[:20]:
            print("  " + l[:250])
        print(f"device memory lost over 100 sessions: {r.get('device_mib_lost_over_100_sessions', '-')} MiB")
        print(f"models: {r.get('models_matched')}/{r.get('models_total')} match the reference; fp16 mode "
              f"{r.get('fp16_models_matched')}/{r.get('models_total')}, fp16 graph "
              f"{r.get('fp16_graph_models_matched')}/{r.get('models_total')} within {FP16_TOL}")
        for m in r.get("models", []):
            worst = max([e["rel_l2"] for e in m.get("outputs", {}).values() if isinstance(e, dict)] or [float("nan")])
            err = m.get("cuda_error", m.get("exception", ""))
            worst16 = max([e["rel_l2"] for k, e in m.get("fp16_outputs", {}).items()
                           if isinstance(e, dict) and k in m.get("fp16_judged_by", [k])] or [float("nan")])
            worst16g = max([e["rel_l2"] for k, e in m.get("fp16_graph_outputs", {}).items()
                            if isinstance(e, dict) and k in m.get("fp16_judged_by", [k])] or [float("nan")])
            err16g = m.get("cuda_fp16_graph_error", "")
            print(f"  {m['model']:<22} {'ok ' if m.get('matched') else 'BAD'} rel_l2 {worst:.2e}   fp16 mode "
                  f"{'ok ' if m.get('fp16_matched') else 'BAD'} {worst16:.2e}   fp16 graph "
                  f"{'ok ' if m.get('fp16_graph_matched') else 'BAD'} {worst16g:.2e} {(err or err16g)[-200:]}")
        prof = r.get("profile_resnet50", {})
        print(f"profile resnet50: device lanes {prof.get('has_device')}, device busy "
              f"{prof.get('median', {}).get('device_busy_ms')} ms of run {prof.get('median', {}).get('run_ms')} ms "
              f"{prof.get('error', '')[-200:]}")
        for t in r.get("timing", []):
            print(f"  time {t['model']:<22} median {t.get('median_ms')} ms  cuda graph {t.get('cuda_graph_median_ms')} ms"
                  f"  create {t.get('create_ms')} ms {t.get('error', '')[-150:]}")
        print(f"duration: {r['duration_s']} s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true", help="skip the node tests and the timing")
    p.add_argument("--steps", default="card,loader,ep_tests,models,node,timing,profile")
    a = p.parse_args()
    c = Checker(a.bundle, a.out, a.quick)
    steps = a.steps.split(",")
    if a.quick:
        steps = [s for s in steps if s not in ("node", "timing", "profile")]
    for step in steps:
        start = time.time()
        try:
            {"card": c.card, "loader": c.loader, "ep_tests": c.ep_tests, "node": c.node_tests,
             "models": c.models, "timing": c.timing, "profile": c.profile}[step]()
        except Exception as e:
            c.report.setdefault("step_errors", {})[step] = repr(e)
        print(f"step {step}: {time.time() - start:.1f} s", flush=True)
        with open(c.log_path("gpu-check.partial.json"), "w") as f:
            json.dump({k: v for k, v in c.report.items() if k != "started"}, f, indent=1)
    c.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
