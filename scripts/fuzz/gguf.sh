#!/usr/bin/env bash
# The GGUF reader's mutation fuzzer at length, under AddressSanitizer +
# UndefinedBehaviorSanitizer: random edits of valid GGUF files must parse or be
# refused with a torsh::Error, never crash or read out of bounds. The suite
# runs the same test for 20000 mutations; this runs as many as asked.
# Usage: bash scripts/fuzz/gguf.sh [mutations] [seed]
# A failure prints its iteration and seed; the same seed repeats the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
iterations="${1:-2000000}"
seed="${2:-$RANDOM}"
[ -f build/asan/CMakeCache.txt ] || cmake --preset asan >/dev/null
cmake --build build/asan -j"${JOBS:-$(nproc)}" --target test_gguf_hostile
echo "GGUF fuzzer: $iterations mutations, seed $seed"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
TORSH_GGUF_FUZZ_ITERS="$iterations" TORSH_GGUF_FUZZ_SEED="$seed" \
  exec build/asan/bin/test_gguf_hostile --gtest_filter='GgufFuzz.*'
