#!/usr/bin/env node
// ONNX Runtime's side of the Loom benchmark: times one model in this process
// the way `loom bench` does, and prints the same JSON keys as
// `loom bench --json`, so bench/run_benchmarks.py can put them side by side.
//
//   node ort_bench.js --model M.onnx [--input NAME=PATH.pb ...] [--threads N]
//                     [--runs R] [--warmup W] [--ort-dir DIR]
//
// Session options are ONNX Runtime's production CPU setup: the CPU EP,
// graphOptimizationLevel 'all', intraOpNumThreads N (0: ORT's default),
// interOpNumThreads 1, executionMode 'sequential'; everything else (thread
// spinning included) is left at ORT's default. Every input must be given as a
// TensorProto file (read by tests/models/ort_node.js): the script makes none up,
// so both runtimes see the same bytes. Latency is wall time around each
// awaited session.run (process.hrtime); cpu_ms is the process's user + system
// CPU time per timed run (all threads); peak_rss_mb is the process's maximum
// resident set (VmHWM; see peakRssMb). --ort-dir is the folder whose
// node_modules holds onnxruntime-node (default: LOOM_ORT_NODE_DIR, then the
// usual resolution). On a failure: one line "ort_bench: <reason>" on stderr,
// exit 1 (exit 2 for bad usage).
'use strict';

const fs = require('fs');
const path = require('path');
const { loadOrt, readFeeds } = require(path.join(__dirname, '..', 'tests', 'models', 'ort_node.js'));

const USAGE = 'usage: ort_bench.js --model M.onnx [--input NAME=PATH.pb ...] [--threads N] [--runs R] [--warmup W] [--ort-dir DIR]';

function fail(msg, code = 1) {
  process.stderr.write(`ort_bench: ${msg.split('\n')[0]}\n`);
  process.exit(code);
}

function count(flag, text, minimum) {
  const v = Number(text);
  if (!Number.isInteger(v) || v < minimum) fail(`${flag}: expected an integer >= ${minimum}, got "${text}"`, 2);
  return v;
}

function parseArgs(argv) {
  const args = { inputs: [], threads: 0, runs: 20, warmup: 5, ortDir: process.env.LOOM_ORT_NODE_DIR || '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`, 2);
      return argv[++i];
    };
    if (a === '--model') args.model = next();
    else if (a === '--input') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq <= 0 || eq + 1 === v.length) fail(`--input wants NAME=PATH.pb, got "${v}"`, 2);
      args.inputs.push([v.slice(0, eq), v.slice(eq + 1)]);
    } else if (a === '--threads') args.threads = count(a, next(), 0);
    else if (a === '--runs') args.runs = count(a, next(), 1);
    else if (a === '--warmup') args.warmup = count(a, next(), 0);
    else if (a === '--ort-dir') args.ortDir = next();
    else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else fail(`unknown argument "${a}" (${USAGE})`, 2);
  }
  if (!args.model) fail('--model is required', 2);
  return args;
}

// Peak resident set in MiB: VmHWM, as `loom bench` reports it. maxRSS
// (getrusage) survives exec on Linux, so it would report the peak of a big
// parent (the Python driver holding the model) instead of this process's.
function peakRssMb() {
  try {
    const m = /^VmHWM:\s*(\d+)\s*kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) / 1024;
  } catch (e) { /* not Linux: fall back */ }
  return process.resourceUsage().maxRSS / 1024;
}

const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; };

// Same definitions as `loom bench`: median averages the two middle values of
// an even count; p90 is the nearest-rank percentile.
function summarize(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const n = s.length;
  return {
    median: n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2,
    p90: s[Math.ceil(0.9 * n) - 1],
    min: s[0],
    mean: s.reduce((a, b) => a + b, 0) / n,
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let ort, feeds;
  try {
    ort = loadOrt(args.ortDir);
    feeds = readFeeds(ort, args.inputs);
  } catch (e) { fail(e.message); }

  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    interOpNumThreads: 1,
    executionMode: 'sequential',
  };
  if (args.threads > 0) options.intraOpNumThreads = args.threads;
  let t0 = process.hrtime.bigint();
  let session;
  try { session = await ort.InferenceSession.create(args.model, options); } catch (e) { fail(`cannot load ${args.model}: ${e.message}`); }
  const createMs = msSince(t0);
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) fail(`no --input for ${missing.join(', ')} (ort_bench makes no inputs up)`);

  const runOnce = async () => {
    const start = process.hrtime.bigint();
    try { await session.run(feeds); } catch (e) { fail(`run failed: ${e.message}`); }
    return msSince(start);
  };
  let firstRunMs = 0;
  for (let i = 0; i < args.warmup; i++) {
    const ms = await runOnce();
    if (i === 0) firstRunMs = ms;
  }
  const latencies = [];
  const cpuStart = cpuMs();
  for (let i = 0; i < args.runs; i++) latencies.push(await runOnce());
  const cpuPerRun = (cpuMs() - cpuStart) / args.runs;
  if (args.warmup === 0) firstRunMs = latencies[0];
  const stats = summarize(latencies);
  const r3 = (v) => Number(v.toFixed(3));
  process.stdout.write(JSON.stringify({
    runtime: 'onnxruntime-node',
    ort_version: ort.env.versions.node,
    model: args.model,
    providers: ['cpu'],
    threads: args.threads,
    warmup: args.warmup,
    runs: args.runs,
    create_ms: r3(createMs),
    first_run_ms: r3(firstRunMs),
    median_ms: r3(stats.median),
    p90_ms: r3(stats.p90),
    min_ms: r3(stats.min),
    mean_ms: r3(stats.mean),
    cpu_ms: r3(cpuPerRun),
    peak_rss_mb: Number(peakRssMb().toFixed(1)),
    latencies_ms: latencies.map(r3),
  }) + '\n');
  await session.release();
}

main().catch((e) => fail(e && e.message ? e.message : String(e)));
