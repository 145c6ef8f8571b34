#!/usr/bin/env bash
# Decode where memory bandwidth is the limit: a ~1B-parameter llama-shaped
# random-weight file (tests/model/random_model.py, shape "1b": Llama 3.2 1B's
# layers with SmolLM2's vocabulary), written as F16 and turned into Q4_K_M by
# llama.cpp's llama-quantize (cached as random-llama-1b.Q4_K_M.gguf in the
# model cache), against llama-bench on the same file, same threads,
# interleaved rounds; then the bytes a decoded token reads (every weight
# tensor once) over the STREAM triad of this machine (../shared/peers).
# torsh runs at both activation widths (int8 is llama.cpp's numerics).
#   LLAMA_BENCH=/path/llama.cpp/build/bin/llama-bench bash scripts/bench/llm_1b.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/random_q4_k_m.sh
file=$(random_q4_k_m 1b llama random-llama-1b)
grep -m1 "model name" /proc/cpuinfo
bytes=$("$py" -c '
import gguf, sys
r = gguf.GGUFReader(sys.argv[1])
print(sum(int(t.n_bytes) for t in r.tensors if t.name != "token_embd.weight" or "output.weight" not in [u.name for u in r.tensors]))' "$file")
echo "weight bytes read per token: $bytes"
peers=$(mktemp -d)
g++ -O3 -march=native -fopenmp ../shared/peers/stream_bw.cpp -o "$peers/stream_bw"
for r in $(seq "$rounds"); do
  echo "== round $r"
  for act in int16 int8; do
    "$torsh" run "$file" -p "The capital of France is" -n 64 --threads 2 --activations $act 2>&1 > /dev/null |
      grep generation | sed "s/^/torsh $act /"
  done
  "$LLAMA_BENCH" -m "$file" -p 128 -n 64 -t 2 -r 3 -o jsonl 2> /dev/null | "$py" -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line)
        print("llama.cpp", "pp%d" % d["n_prompt"] if d["n_prompt"] else "tg%d" % d["n_gen"], round(d["avg_ts"], 1), "tokens/s")'
  OMP_NUM_THREADS=2 "$peers/stream_bw" | grep '"threads": 2'
done
rm -rf "$peers"
