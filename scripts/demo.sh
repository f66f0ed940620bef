#!/bin/sh
# `make demo`: compiles the example ResNet-style network for the Gaudi target, runs it with
# --check against the reference backend, prints the summary and writes a Chrome/Perfetto trace.
# Usage: scripts/demo.sh BUILD_DIR
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
tessera="$build/src/tools/tessera"
model="$here/examples/models/resnet_small.onnx"
out="$build/demo"
if [ ! -x "$tessera" ]; then
  echo "demo: $tessera not found; build first (make build)" >&2
  exit 1
fi
mkdir -p "$out"
# The gaudi target when it is registered, else the reference backend.
target=reference
if "$tessera" targets | grep -q '^gaudi '; then target=gaudi; fi
echo "== tessera targets"
"$tessera" targets
echo
echo "== tessera compile $(basename "$model") --target $target"
"$tessera" compile "$model" --target "$target" -o "$out/resnet_small.tsm"
echo
echo "== tessera run resnet_small.tsm --check"
"$tessera" run "$out/resnet_small.tsm" --check --outputs "$out/outputs" \
  --profile "$out/profile.json" --trace "$out/trace.json"
echo
echo "demo: outputs in $out/outputs, profile in $out/profile.json, trace in $out/trace.json"
