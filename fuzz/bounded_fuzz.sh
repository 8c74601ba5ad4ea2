#!/usr/bin/env bash
# One bounded fuzzing run of a libFuzzer target for the test suite (ctest
# fuzz.<target>.bounded in the sanitizer build): SECONDS of coverage-guided
# fuzzing from a corpus seeded with the target's regression inputs and a
# sample of the ONNX backend suite's models, stopping at the first crash,
# leak, sanitizer report or timeout (which fails the test and is kept under
# the build folder's fuzz-ci-findings/<target>/, to move to
# fuzz/regressions/<target>/ once fixed). Longer runs: fuzz/run_fuzzers.sh.
#
#   bounded_fuzz.sh FUZZER TARGET SECONDS WORK_DIR
set -euo pipefail
fuzzer=$1
target=$2
seconds=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
seeds=/usr/share/libonnx-testdata/data/node
corpus=$work/fuzz-ci-corpus/$target
findings=$work/fuzz-ci-findings/$target
mkdir -p "$corpus" "$findings"
if [ -z "$(ls -A "$corpus")" ]; then
  cp "$here"/regressions/"$target"/* "$corpus"/ 2>/dev/null || true
  # Every eighth backend-suite model: a spread of ops, small and quick to read.
  n=0
  for m in "$seeds"/*/model.onnx; do
    [ $((n % 8)) -eq 0 ] && cp "$m" "$corpus/$(basename "$(dirname "$m")").onnx"
    n=$((n + 1))
  done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
echo "fuzzing $target for ${seconds}s from $(ls "$corpus" | wc -l) inputs"
if "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
     -artifact_prefix="$findings/" "$corpus" > "$work/fuzz-ci-$target.log" 2>&1; then
  tail -12 "$work/fuzz-ci-$target.log"
  exit 0
fi
tail -60 "$work/fuzz-ci-$target.log"
echo "bounded_fuzz: $target found a problem; the input is in $findings/" >&2
exit 1
