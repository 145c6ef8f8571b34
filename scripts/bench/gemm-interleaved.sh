#!/usr/bin/env bash
# torsh matmul and OpenBLAS cblas_sgemm alternating in one process (see
# gemm-interleaved.cpp): the tighter GEMM ratio quoted in BENCHMARKS.md.
# Needs a Release build (bash scripts/run.sh) and libopenblas-dev.
#
#   bash scripts/bench/gemm-interleaved.sh [threads] [rounds] [sizes...]
#   TORSH_CPU_ISA=avx2 bash scripts/bench/gemm-interleaved.sh ...   # AVX2 against OpenBLAS Haswell
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=${1:-2}
rounds=${2:-9}
shift $(( $# < 2 ? $# : 2 ))
sizes=${*:-"256 1024 2048 4096"}
out=${TMPDIR:-/tmp}/torsh-bench; mkdir -p "$out"
g++ -O2 -std=c++20 scripts/bench/gemm-interleaved.cpp -o "$out/gemm-interleaved" -Iinclude -Ibuild/release/include \
  -I/usr/include/x86_64-linux-gnu/openblas-pthread -Lbuild/release/lib -ltorsh \
  -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -Wl,-rpath,"$PWD/build/release/lib"
# OpenBLAS picks its own kernels, as the peers do; with TORSH_CPU_ISA=avx2
# both sides are held to AVX2: torsh's AVX2 kernel against OpenBLAS's Haswell one.
if [ "${TORSH_CPU_ISA:-}" = avx2 ]; then peer=(OPENBLAS_CORETYPE=Haswell); else peer=(-u OPENBLAS_CORETYPE); fi
env -u OPENBLAS_L2_SIZE "${peer[@]}" OPENBLAS_NUM_THREADS="$threads" \
  "$out/gemm-interleaved" "$threads" "$rounds" $sizes
