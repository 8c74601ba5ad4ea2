#!/usr/bin/env bash
# Runs each libFuzzer target for a given time on a corpus seeded from the
# ONNX backend suite's models, in the sanitizer build (scripts/sanitize.sh
# makes it; this script builds it if missing).
#
#   fuzz/run_fuzzers.sh SECONDS [TARGET...]    # targets: model_loader session_run
#
# Corpora grow in $LOOM_SANITIZE_BUILD_DIR/fuzz-corpus/<target>; crashes,
# leaks and timeouts are written to fuzz/findings/<target>/ (copy each, once
# fixed, to fuzz/regressions/<target>/ so ctest replays it forever). The
# last lines of each log give executions and coverage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${LOOM_SANITIZE_BUILD_DIR:-$root/build-sanitize}
seconds=${1:?usage: run_fuzzers.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model_loader session_run)
seeds=/usr/share/libonnx-testdata/data/node

if [ ! -x "$build/bin/loom_fuzz_model_loader" ]; then
  LOOM_SANITIZE_BUILD_DIR=$build "$root/scripts/sanitize.sh" -L fuzz
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
for t in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$t
  findings=$here/findings/$t
  mkdir -p "$corpus" "$findings"
  if [ -z "$(ls -A "$corpus")" ]; then
    # Seed: every backend-suite model (each a small valid graph of one op).
    for m in "$seeds"/*/model.onnx; do cp "$m" "$corpus/$(basename "$(dirname "$m")").onnx"; done
  fi
  echo "fuzzing $t for ${seconds}s (corpus $corpus)"
  # Fork mode goes on past a finding, so one run of the given length
  # collects every crash, leak, timeout and out-of-memory it meets.
  "$build/bin/loom_fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" 2>&1 | tee "$build/fuzz-$t.log" | tail -25
  echo "findings: $(ls "$findings" | wc -l) in $findings"
done
