# Sourced by the benchmark scripts that run random-weight files against
# llama.cpp (llm_1b.sh, llm_arch.sh): from the repository root, with
# LLAMA_BENCH naming llama.cpp's build/bin/llama-bench (its llama-quantize
# makes the files), it sets rounds, torsh, py and model (the cached SmolLM2,
# whose tokenizer the files copy) and defines random_q4_k_m.
set -euo pipefail
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
rounds=${1:-3}
torsh=${TORSH:-build/release/bin/torsh}
py=${PYTHON:-build/pyenv/bin/python}
bin=$(dirname "${LLAMA_BENCH:?LLAMA_BENCH names llama.cpp build/bin/llama-bench (its llama-quantize makes the files)}")
model=$(bash scripts/fetch-model.sh | tail -n1)

# random_q4_k_m SHAPE ARCH NAME: the model cache's NAME.Q4_K_M.gguf, written
# once (tests/model/random_model.py as F16, then llama-quantize), its path printed.
random_q4_k_m() {
  local file f16
  file="$(dirname "$model")/$3.Q4_K_M.gguf"
  if [ ! -f "$file" ]; then
    f16=$(mktemp --suffix=.gguf)
    "$py" tests/model/random_model.py "$model" "$f16" f16 "$1" "$2" >&2
    "$bin/llama-quantize" "$f16" "$file" Q4_K_M > /dev/null 2>&1
    rm -f "$f16"
  fi
  echo "$file"
}
