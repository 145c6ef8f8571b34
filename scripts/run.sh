#!/usr/bin/env bash
# The main job: install what is missing, build (Release), then `torsh info` and `torsh demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
./build/release/bin/torsh info
./build/release/bin/torsh demo
