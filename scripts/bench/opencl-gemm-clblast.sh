#!/usr/bin/env bash
# torsh's OpenCL GEMM against CLBlast on the same OpenCL device (PoCL here),
# in one process and interleaved rounds (see opencl-gemm-clblast.cpp): the
# "OpenCL GEMM vs CLBlast" figures of BENCHMARKS.md. Needs a build with the
# OpenCL plugin (default build/dev, or BUILD_DIR) and libclblast-dev.
#
#   bash scripts/bench/opencl-gemm-clblast.sh [rounds] [dtype] [MxNxK ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build/dev}
rounds=${1:-5}
dtype=${2:-f32}
shift $(( $# < 2 ? $# : 2 ))
shapes=${*:-"128x128x128 256x256x256 512x512x512 1024x1024x1024 128x2048x576"}
out=${TMPDIR:-/tmp}/torsh-bench; mkdir -p "$out"
g++ -O2 -std=c++20 scripts/bench/opencl-gemm-clblast.cpp -o "$out/opencl-gemm-clblast" -Iinclude -I"$build/include" \
  -DCL_TARGET_OPENCL_VERSION=120 -L"$build/lib" -ltorsh -lclblast -lOpenCL -Wl,-rpath,"$PWD/$build/lib"
"$out/opencl-gemm-clblast" "$rounds" "$dtype" $shapes
