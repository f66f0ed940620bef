#!/usr/bin/env bash
# Installs the Debian packages Tessera builds and tests with, when missing.
# Every dependency comes from Debian; nothing is downloaded at build time.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  ccache               # compiler cache: rebuilds in seconds
  nlohmann-json3-dev   # JSON: machine presets, profiles
  libcli11-dev         # the tessera command line
  libfmt-dev           # formatting of messages and reports
  libopenblas-dev      # host GEMM for the MME and the reference ops
  libdnnl-dev          # host convolutions (oneDNN) for the MME and the reference ops
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX import
  libonnx-testdata     # ONNX backend node tests for the conformance suite
  python3 python3-onnx python3-numpy  # the names-diff test; scripts that build the bundled models
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "tessera: missing Debian packages: ${missing[*]}" >&2
  echo "tessera: run 'sudo apt-get install ${missing[*]}' or run make as root" >&2
  exit 1
fi
echo "tessera: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
