#!/usr/bin/env bash
# SmolLM2-135M-Instruct (Q4_1) prefill 128 / decode 64 against llama.cpp's
# llama-bench on the same file, same threads, interleaved rounds, with each
# side's peak resident memory. LLAMA_BENCH names the llama-bench binary
# (build it from `pip download --no-deps --no-binary :all: llama-cpp-python`,
# vendor/llama.cpp, target llama-bench); without it only torsh runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
rounds=${1:-3}
model=$(bash scripts/fetch-model.sh | tail -n1)
torsh=${TORSH:-build/release/bin/torsh}
grep -m1 "model name" /proc/cpuinfo
for r in $(seq "$rounds"); do
  echo "== round $r"
  /usr/bin/time -f "torsh peak RSS %M KiB" "$torsh" bench --filter llm --threads 2 --json 2>&1
  if [ -n "${LLAMA_BENCH:-}" ]; then
    /usr/bin/time -f "llama.cpp peak RSS %M KiB" "$LLAMA_BENCH" -m "$model" -p 128 -n 64 -t 2 -r 3 -o jsonl 2>&1 |
      python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        d = json.loads(line)
        test = "pp%d" % d["n_prompt"] if d["n_prompt"] else "tg%d" % d["n_gen"]
        print("llama.cpp", test, round(d["avg_ts"], 1), "tokens/s")
    elif "RSS" in line:
        print(line)'
  fi
done
