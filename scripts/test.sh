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
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
jobs=$(nproc)
echo "== Release build and tests"
cmake --preset release >/dev/null
cmake --build --preset release -j"$jobs"
ctest --preset release
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
# the thread exits.
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
