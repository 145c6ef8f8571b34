#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and an existing build: the GPU tests (the
# CUDA plugin's own, the cross-backend harness on every GPU backend found,
# the model blocks, user kernels), then the benchmark suite on CUDA against
# PyTorch on the same GPU in interleaved rounds (scripts/peers/torch-cuda.py).
#   bash scripts/cuda-check.sh OUTDIR [rounds]
# Writes OUTDIR/info.txt, tests.log, bench.jsonl and bench.md.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: cuda-check.sh OUTDIR [rounds]}
rounds=${2:-3}
mkdir -p "$out"
bin=${TORSH_BIN:-build/release/bin}
[ -n "${XDG_RUNTIME_DIR:-}" ] || export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/torsh-xdg-$(id -u)" && mkdir -p -m 700 "$XDG_RUNTIME_DIR"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$bin/torsh" info
} >"$out/info.txt" 2>&1

# Each binary under a time limit so one hang cannot eat the session.
run_test() {
  local limit=$1 name=$2
  shift 2
  echo "=== $name $*"
  timeout "$limit" "$bin/$name" "$@" 2>&1 | grep -v '^\[       OK \]\|^\[ RUN      \]'
  echo "=== $name exit ${PIPESTATUS[0]}"
}
{
  run_test 120 test_cuda
  run_test 120 test_plugins
  run_test 180 test_gpu_blocks
  run_test 120 test_user_kernel_cuda
  run_test 120 test_user_kernel_runtime
  run_test 120 test_integer_matmul
  run_test 120 test_sparse
  TORSH_BACKEND_OPS_VERBOSE=${TORSH_BACKEND_OPS_VERBOSE:-0} run_test 300 test_backend_ops
} >"$out/tests.log" 2>&1

cases=(matmul_f32_256 matmul_f32_1024 matmul_f32_2048 matmul_f32_4096 matmul_bf16_2048 add_f32_16M gelu_f32_16M
       softmax_f32_4096x4096 layer_norm_f32_4096x4096 rms_norm_f32_4096x4096 conv2d_f32_n1_c64_h56_k64_r3
       conv2d_f32_n8_c256_h14_k256_r3 attention_f32_causal_s2048_h8_d64 adam_f32_16M add_f32_4
       matmul_integer_u8i8_1024 matmul_integer_u8i8_4096 matmul_integer_i8i8_1024 matmul_integer_i8i8_4096
       matmul_integer_u8i8_prepared_1024 matmul_integer_u8i8_prepared_4096)
: >"$out/bench.jsonl"
for ((r = 1; r <= rounds; r++)); do
  for c in "${cases[@]}"; do
    timeout 60 "$bin/torsh" bench --backend cuda --filter "$c" --min-seconds 0.2 --json 2>>"$out/tests.log" |
      grep '^{' | grep "\"name\":\"$c\"" >>"$out/bench.jsonl"
  done
  timeout 120 python3 scripts/peers/torch-cuda.py --min-seconds 0.2 >>"$out/bench.jsonl" 2>>"$out/tests.log"
done
python3 - "$out/bench.jsonl" >"$out/bench.md" <<'PY'
import json, sys
best, order = {}, []
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["name"], r["backend"])
    best[key] = min(best.get(key, float("inf")), r["median_ms"])
    if r["name"] not in order:
        order.append(r["name"])
print("| case | torsh cuda best ms | PyTorch cuda best ms | PyTorch / torsh |")
print("|---|---|---|---|")
for n in order:
    t, p = best.get((n, "cuda")), best.get((n, "pytorch-cuda"))
    ratio = f"{p / t:.2f}x" if t and p else "-"
    print(f"| {n} | {t if t else '-'} | {p if p else '-'} | {ratio} |")
PY
cat "$out/bench.md"
grep -E '^=== .* exit|PASSED|FAILED|natively|fell back' "$out/tests.log"
