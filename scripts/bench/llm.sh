#!/usr/bin/env bash
# SmolLM2-135M-Instruct against llama.cpp on the same files, same threads,
# interleaved rounds, with each side's peak resident memory:
#   - the cached Q4_1 file: prefill 128, decode 64 at depth 0, 512 and 2048
#     (llama-bench -p 128 -n 64 -d 0,512,2048);
#   - its requantizations to F16, Q4_K_M, Q5_K_M, Q6_K, Q8_0 and IQ4_XS (made once with
#     llama-quantize into the model cache as SmolLM2-135M-Instruct.TYPE.gguf;
#     model::kSmolLM2Requantized): the same cases;
#   - aggregate decode of 1, 2, 4 and 8 sequences (llama-batched-bench -npl).
# LLAMA_BENCH names llama.cpp's build/bin directory's llama-bench (build it from
# `pip download --no-deps --no-binary :all: llama-cpp-python`, vendor/llama.cpp,
# targets llama-bench llama-quantize llama-batched-bench); llama-quantize and
# llama-batched-bench are taken from the same directory. Without it only torsh runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
rounds=${1:-3}
model=$(bash scripts/fetch-model.sh | tail -n1)
torsh=${TORSH:-build/release/bin/torsh}
bin=$(dirname "${LLAMA_BENCH:-/nonexistent/llama-bench}")
files=("$model")
for type in F16 Q4_K_M Q5_K_M Q6_K Q8_0 IQ4_XS; do
  f="$(dirname "$model")/SmolLM2-135M-Instruct.$type.gguf"
  if [ -n "${LLAMA_BENCH:-}" ] && [ ! -f "$f" ] && [ -x "$bin/llama-quantize" ]; then
    "$bin/llama-quantize" --allow-requantize "$model" "$f" "$type" > /dev/null 2>&1
  fi
  files+=("$f")
done
grep -m1 "model name" /proc/cpuinfo
llama_jsonl() {
  python3 -c '
import json, sys
tag = sys.argv[1]
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        d = json.loads(line)
        test = "pp%d" % d["n_prompt"] if d["n_prompt"] else "tg%d" % d["n_gen"]
        if d.get("n_depth"):
            test += "@d%d" % d["n_depth"]
        print("llama.cpp", tag, test, round(d["avg_ts"], 1), "tokens/s")
    elif "RSS" in line:
        print(line)' "$1"
}
for r in $(seq "$rounds"); do
  echo "== round $r"
  /usr/bin/time -f "torsh peak RSS %M KiB" "$torsh" bench --filter llm --threads 2 --json 2>&1
  if [ -n "${LLAMA_BENCH:-}" ]; then
    for f in "${files[@]}"; do
      [ -f "$f" ] || continue
      /usr/bin/time -f "llama.cpp peak RSS %M KiB" "$LLAMA_BENCH" -m "$f" -p 128 -n 64 -d 0,512,2048 -t 2 -r 3 \
        -o jsonl 2>&1 | llama_jsonl "$(basename "$f")"
    done
    if [ -x "$bin/llama-batched-bench" ]; then
      # Aggregate decode (S_TG) of N sequences of 64 tokens after a 128-token prompt each.
      "$bin/llama-batched-bench" -m "$model" -c 2048 -b 2048 -ub 512 -npp 128 -ntg 64 -npl 1,2,4,8 -t 2 \
        --output-format jsonl 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line)
        print("llama.cpp batched npl=%d decode %.1f tokens/s" % (d["pl"], d["speed_tg"]))'
    fi
  fi
done
