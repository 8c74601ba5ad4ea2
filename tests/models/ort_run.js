#!/usr/bin/env node
// Runs ONNX Runtime (npm onnxruntime-node, CPU) on one model, with the same
// command-line contract as `loom run`:
//
//   node ort_run.js --model M.onnx --input NAME=PATH.pb ... --save-outputs DIR
//                   [--ort-dir DIR] [--threads N] [--repeat N]
//                   [--opt-level disabled|basic|extended|all]
//
// Inputs and outputs are ONNX TensorProto files (outputs go to DIR/<name>.pb),
// read and written by ort_node.js. --ort-dir is the folder whose node_modules holds
// onnxruntime-node (default: the environment's LOOM_ORT_NODE_DIR, then the
// usual Node resolution). Prints session-creation and run times on stdout; on a
// failure prints one line "ort_run: <reason>" on stderr and exits 1.
'use strict';

const fs = require('fs');
const path = require('path');
const { loadOrt, readFeeds, serializeTensor } = require('./ort_node');

function fail(msg) {
  process.stderr.write(`ort_run: ${msg}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------- main

function parseArgs(argv) {
  const args = { inputs: [], threads: 0, repeat: 1, optLevel: 'all', ortDir: process.env.LOOM_ORT_NODE_DIR || '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--model') args.model = next();
    else if (a === '--input') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq <= 0) fail(`--input wants NAME=PATH.pb, got "${v}"`);
      args.inputs.push([v.slice(0, eq), v.slice(eq + 1)]);
    } else if (a === '--save-outputs') args.outDir = next();
    else if (a === '--ort-dir') args.ortDir = next();
    else if (a === '--threads') args.threads = Number(next());
    else if (a === '--repeat') args.repeat = Math.max(1, Number(next()));
    else if (a === '--opt-level') args.optLevel = next();
    else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: ort_run.js --model M.onnx --input NAME=PATH.pb ... --save-outputs DIR [--ort-dir DIR] [--threads N] [--repeat N] [--opt-level disabled|basic|extended|all]\n');
      process.exit(0);
    } else fail(`unknown argument "${a}"`);
  }
  if (!args.model) fail('--model is required');
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let ort, feeds;
  try {
    ort = loadOrt(args.ortDir);
    feeds = readFeeds(ort, args.inputs);
  } catch (e) { fail(e.message); }

  const options = { executionProviders: ['cpu'], graphOptimizationLevel: args.optLevel };
  if (args.threads > 0) options.intraOpNumThreads = args.threads;
  let t0 = process.hrtime.bigint();
  let session;
  try { session = await ort.InferenceSession.create(args.model, options); } catch (e) { fail(`cannot load ${args.model}: ${e.message.split('\n')[0]}`); }
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;

  let results, firstMs = 0, totalMs = 0;
  for (let i = 0; i < args.repeat; i++) {
    t0 = process.hrtime.bigint();
    try { results = await session.run(feeds); } catch (e) { fail(`run failed: ${e.message.split('\n')[0]}`); }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (i === 0) firstMs = ms;
    totalMs += ms;
  }
  let timing = `ort_run: session ${createMs.toFixed(1)} ms, first run ${firstMs.toFixed(1)} ms`;
  if (args.repeat > 1) timing += `, mean of ${args.repeat} runs ${(totalMs / args.repeat).toFixed(1)} ms`;
  process.stdout.write(timing + '\n');

  if (args.outDir) {
    fs.mkdirSync(args.outDir, { recursive: true });
    for (const name of session.outputNames) {
      const file = path.join(args.outDir, `${name.replace(/[\/\\]/g, '_')}.pb`);
      try { fs.writeFileSync(file, serializeTensor(name, results[name])); } catch (e) { fail(e.message); }
    }
  }
}

main().catch((e) => fail(e && e.message ? e.message.split('\n')[0] : String(e)));
