#!/usr/bin/env bash
# Every test, leg by leg, with each leg's wall time in a table at the end:
# install what is missing; check the formatting; run the main job
# (scripts/run.sh) and check that nothing in its output looks like an error;
# build Release (every plugin whose toolchain is present) and run the suite (the
# cross-backend op harness included); the profiled benchmark suite under a
# memory cap; the installed package; the Python package (a wheel made by
# `pip install .`) and its tests; the op fuzzer on every backend; then the C++
# suite built with AddressSanitizer + UndefinedBehaviorSanitizer and with
# ThreadSanitizer. Tests for devices this machine lacks (CUDA, ROCm without a
# GPU) report as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/legs.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
jobs=$(nproc)
mkdir -p build/logs

setup() {
  bash scripts/install-deps.sh
  # The model the model tests and the llm bench cases run (fetched once, SHA-256 checked).
  bash scripts/fetch-model.sh
}

# The README's first command, as a newcomer runs it: no runtime folder exported
# (Mesa's complaint about it must stay out), nothing that looks like an error
# when nothing failed.
main_job() {
  env -u XDG_RUNTIME_DIR bash scripts/run.sh 2>&1 | tee build/logs/main-job.log
  quiet build/logs/main-job.log
}

release_build() {
  cmake --preset release >/dev/null
  cmake --build --preset release -j"$jobs" 2>&1 | tee build/logs/release-build.log
  quiet build/logs/release-build.log
}

# The profiler keeps at most --profile-max-events records (the table counts
# every op): the whole suite, profiled, must stay under 1 GiB resident, and the
# trace must say how many records the cap dropped. A small --min-seconds keeps
# it short; a small cap makes sure records are dropped.
# The model folder holds only the fetched model, so the suite's language-model
# cases are the same on every machine (the requantized files that
# scripts/bench/llm.sh adds to the cache would add minutes).
profiled_bench() {
  local trace=build/release/bench-profile.json models=build/release/bench-models
  rm -rf "$models" && mkdir -p "$models"
  ln -s "$(bash scripts/fetch-model.sh | tail -n1)" "$models/"
  /usr/bin/time -f "%M" -o build/release/bench-profile.rss env TORSH_MODEL_DIR="$PWD/$models" \
    build/release/bin/torsh bench --min-seconds 0.05 --profile "$trace" --profile-max-events 100000 \
    >/dev/null 2>build/release/bench-profile.log || { cat build/release/bench-profile.log; return 1; }
  local rss_kib
  rss_kib=$(tail -n1 build/release/bench-profile.rss)
  echo "peak resident memory: $((rss_kib / 1024)) MiB (cap 1024 MiB)"
  [ "$rss_kib" -lt $((1024 * 1024)) ] || { echo "FAILED: the profiled suite took $rss_kib KiB resident"; return 1; }
  python3 - "$trace" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))["otherData"]
print("trace:", meta)
assert meta["kept_events"] == meta["max_events"] == 100000, meta
assert meta["dropped_events"] > 0 and meta["events"] == meta["kept_events"] + meta["dropped_events"], meta
PY
  grep -q "events dropped from the trace" build/release/bench-profile.log
}

installed_package() {
  rm -rf build/install build/consumer
  cmake --install build/release --prefix "$PWD/build/install" >/dev/null
  cmake -S examples/consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
  cmake --build build/consumer >/dev/null
  ./build/consumer/consumer
  PKG_CONFIG_PATH="$PWD/build/install/lib/pkgconfig" pkg-config --cflags --libs torsh
}

# A few thousand cases per backend; the seed changes daily (and is printed), so
# runs cover new cases while any failure replays from its seed.
# scripts/fuzz/ops.sh runs many more.
op_fuzzer() {
  build/pyenv/bin/python tests/fuzz/op_fuzz.py --cases "${TORSH_FUZZ_CASES:-3000}" \
    --seed "${TORSH_FUZZ_SEED:-$(date +%Y%j)}"
}

# Both sanitizer presets compile at -O1 -g1 (CMakePresets.json): enough
# inlining that the instrumented suite runs at a usable speed, and the line
# tables the sanitizers' stack traces need. -O2 -g took 14x as long to compile
# the FFT stages (3 target_clones) under ASan.
# The asan test preset runs with use_sigaltstack=0: loading PoCL makes its
# LLVM (llvm::sys::RemoveFileOnSignal) install a malloc'd alternate signal
# stack on that thread, and ASan aborts trying to unmap it as its own when
# the thread exits. It also runs with intercept_tls_get_addr=0: GCC 12's
# __tls_get_addr interceptor takes a dynamic TLS block that happens to start
# 16 bytes into a page for a pre-2.25 glibc header and reads the words before
# it as a range, so LeakSanitizer's exit-time scan faults on the thread-locals
# of CPU user kernels (shared objects loaded from memory).
sanitizer_build() {
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1" -j"$jobs"
}

leg "Setup: Debian packages, wgpu-native, the model" setup
leg "Format: clang-format over src include tools python/src tests" bash scripts/format.sh --check
leg "Main job: scripts/run.sh, its output checked" main_job
leg "Release: build (every plugin with a toolchain)" release_build
leg "Release: ctest (cross-backend harness included)" ctest --preset release
leg "Release: profiled benchmark suite, memory cap" profiled_bench
leg "Installed package: find_package and pkg-config" installed_package
leg "Python: pip install . and pytest" bash scripts/test-python.sh
leg "Python: op fuzzer on every backend" op_fuzzer
leg "ASan + UBSan: build" sanitizer_build asan
leg "ASan + UBSan: ctest" ctest --preset asan
# ThreadSanitizer: the thread pool, the memory pool's stream-ordered reuse,
# the registry, the profiler and graph capture are shared between threads. The
# GPU plugins are off here (their drivers are not instrumented), so their
# tests skip.
leg "TSan: build" sanitizer_build tsan
leg "TSan: ctest" ctest --preset tsan
