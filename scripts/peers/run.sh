#!/usr/bin/env bash
# Builds and runs the peer measurements (JSON lines, case names as in `torsh bench`): FMA peak, memory bandwidth, OpenBLAS sgemm
# (AVX-512 kernels: the OPENBLAS_* overrides of these machines are unset for this
# command only) and PyTorch CPU ops (skipped when /usr/bin/python3 has no torch).
# Needs: g++, libopenblas-dev, python3-torch. scripts/bench/suite.sh joins the output
# with `torsh bench --json` by case name.
#   bash scripts/peers/run.sh [sgemm sizes...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/torsh-peers; mkdir -p "$out"
g++ -O2 -march=native -pthread "$here/fma-peak.cpp" -o "$out/fma-peak"
g++ -O3 -march=native -fopenmp "$here/stream-bw.cpp" -o "$out/stream-bw"
g++ -O2 "$here/sgemm-openblas.cpp" -o "$out/sgemm-openblas" \
  -I/usr/include/x86_64-linux-gnu/openblas-pthread -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas
"$out/fma-peak"
"$out/stream-bw"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$out/sgemm-openblas" "$@"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$here/torch-ops.py"
fi
