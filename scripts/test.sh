#!/usr/bin/env bash
# Every test: install what is missing, build Release and run the suite (the
# cross-backend op harness included), check the installed package, build the
# Python package and run its tests and the op fuzzer, then build with
# AddressSanitizer + UndefinedBehaviorSanitizer and with ThreadSanitizer and
# run the C++ suite under each. Tests for devices this machine lacks (CUDA,
# ROCm without a GPU) report as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The model the model tests and the llm bench cases run (fetched once, SHA-256 checked).
bash scripts/fetch-model.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
jobs=$(nproc)
# Mesa (lavapipe, under the WebGPU plugin) complains on stderr without a runtime folder.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/torsh-xdg-$(id -u)"
  mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi
echo "== Release build and tests"
cmake --preset release >/dev/null
cmake --build --preset release -j"$jobs"
ctest --preset release
echo "== Profiled whole benchmark suite under a resident-memory cap"
# The profiler keeps at most --profile-max-events records (the table counts
# every op): the whole suite, profiled, must stay under 1 GiB resident, and the
# trace must say how many records the cap dropped. A small --min-seconds keeps
# it short; a small cap makes sure records are dropped.
trace=build/release/bench-profile.json
/usr/bin/time -f "%M" -o build/release/bench-profile.rss \
  build/release/bin/torsh bench --min-seconds 0.05 --profile "$trace" --profile-max-events 100000 \
  >/dev/null 2>build/release/bench-profile.log || { cat build/release/bench-profile.log; exit 1; }
rss_kib=$(tail -n1 build/release/bench-profile.rss)
echo "peak resident memory: $((rss_kib / 1024)) MiB (cap 1024 MiB)"
[ "$rss_kib" -lt $((1024 * 1024)) ] || { echo "FAILED: the profiled suite took $rss_kib KiB resident"; exit 1; }
python3 - "$trace" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))["otherData"]
print("trace:", meta)
assert meta["kept_events"] == meta["max_events"] == 100000, meta
assert meta["dropped_events"] > 0 and meta["events"] == meta["kept_events"] + meta["dropped_events"], meta
PY
grep -q "events dropped from the trace" build/release/bench-profile.log
echo "== Installed package: find_package(torsh) and pkg-config"
rm -rf build/install build/consumer
cmake --install build/release --prefix "$PWD/build/install" >/dev/null
cmake -S examples/consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
cmake --build build/consumer >/dev/null
./build/consumer/consumer
PKG_CONFIG_PATH="$PWD/build/install/lib/pkgconfig" pkg-config --cflags --libs torsh
echo "== Python package: pip install . and pytest"
bash scripts/test-python.sh
# The asan test preset runs with use_sigaltstack=0: loading PoCL makes its
# LLVM (llvm::sys::RemoveFileOnSignal) install a malloc'd alternate signal
# stack on that thread, and ASan aborts trying to unmap it as its own when
# the thread exits. It also runs with intercept_tls_get_addr=0: GCC 12's
# __tls_get_addr interceptor takes a dynamic TLS block that happens to start
# 16 bytes into a page for a pre-2.25 glibc header and reads the words before
# it as a range, so LeakSanitizer's exit-time scan faults on the thread-locals
# of CPU user kernels (shared objects loaded from memory).
# Both sanitizer presets compile at -O1 -g1 (CMakePresets.json): enough
# inlining that the instrumented suite runs at a usable speed, and the line
# tables the sanitizers' stack traces need. -O2 -g took 14x as long to compile
# the FFT stages (3 target_clones) under ASan, which pushed CI past its budget.
echo "== ASan + UBSan build and tests"
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$jobs"
ctest --preset asan
# ThreadSanitizer over the same suite: the thread pool, the memory pool's
# stream-ordered reuse, the registry, the profiler and graph capture are
# shared between threads. The GPU plugins are off here (their drivers are not
# instrumented), so their tests skip.
echo "== ThreadSanitizer build and tests"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j"$jobs"
ctest --preset tsan
