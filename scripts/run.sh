#!/usr/bin/env bash
# The main job: install what is missing, fetch the model once (SmolLM2-135M-Instruct,
# Q4_1 GGUF, into ~/.cache/torsh/models), build (Release), print `torsh info`, then
# answer a chat prompt with the model, ending with prompt and generation tokens/s.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/fetch-model.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
./build/release/bin/torsh info
./build/release/bin/torsh run --chat --max-tokens 96 --prompt "${TORSH_PROMPT:-What is the capital of France, and why is it famous?}"
