#!/usr/bin/env bash
# The CPU FFT against fftwf_execute, alternating in one process (see
# fft-interleaved.cpp): the transform alone, the op call returning a new
# tensor (eager) and the op call into a tensor allocated once (out=), each
# with FFTW's time from the same rounds: the in-process FFT ratios quoted in
# BENCHMARKS.md. Needs a Release build (bash scripts/run.sh) and libfftw3-dev.
#
#   bash scripts/bench/fft-interleaved.sh [rounds] [lengths...]
#   TORSH_CPU_ISA=avx2 bash scripts/bench/fft-interleaved.sh ...   # the 256-bit stages
# FFTW is GPL: a benchmark peer only, compiled into a temporary binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-15}
shift $(( $# < 1 ? $# : 1 ))
sizes=${*:-"256 1024 2048 4096"}
out=${TMPDIR:-/tmp}/torsh-bench; mkdir -p "$out"
g++ -O2 -std=c++20 scripts/bench/fft-interleaved.cpp -o "$out/fft-interleaved" -Iinclude -Ibuild/release/include -Isrc \
  -Lbuild/release/lib -ltorsh -lfftw3f -Wl,-rpath,"$PWD/build/release/lib"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$out/fft-interleaved" "$rounds" $sizes
