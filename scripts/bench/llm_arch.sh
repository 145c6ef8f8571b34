#!/usr/bin/env bash
# The other architectures against llama.cpp: random-weight files of
# Qwen2.5-0.5B's, Qwen3-0.6B's and Gemma-3-1B's layers (tests/model/random_model.py
# shapes "qwen2-0.5b", "qwen3-0.6b", "gemma3-1b"; SmolLM2's 49152-token
# vocabulary, not their 151936 / 262144), written as F16 and turned into Q4_K_M by llama.cpp's llama-quantize
# (cached as random-ARCH-SIZE.Q4_K_M.gguf in the model cache); prefill 128 and
# decode 64 at depth 0 against `llama-bench -p 128 -n 64 -t 2` on the same
# file, interleaved rounds. torsh runs at both activation widths (int8 is
# llama.cpp's numerics). Read the log with scripts/bench/llm_table.py.
#   LLAMA_BENCH=/path/llama.cpp/build/bin/llama-bench bash scripts/bench/llm_arch.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/random_q4_k_m.sh
files=()
for spec in qwen2:qwen2-0.5b qwen3:qwen3-0.6b gemma3:gemma3-1b; do
  files+=("$(random_q4_k_m "${spec#*:}" "${spec%%:*}" "random-${spec#*:}")")
done
grep -m1 "model name" /proc/cpuinfo
for r in $(seq "$rounds"); do
  echo "== round $r"
  "$torsh" bench --filter llm_random --threads 2 --json 2>&1
  for f in "${files[@]}"; do
    "$LLAMA_BENCH" -m "$f" -p 128 -n 64 -t 2 -r 3 -o jsonl 2> /dev/null | "$py" -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line)
        test = "pp%d" % d["n_prompt"] if d["n_prompt"] else "tg%d" % d["n_gen"]
        print("llama.cpp", sys.argv[1], test, round(d["avg_ts"], 1), "tokens/s")' "$(basename "$f")"
  done
done
