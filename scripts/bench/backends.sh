#!/usr/bin/env bash
# The same `torsh bench` cases on several backends of this machine, in
# interleaved rounds (each round runs every case on every backend once), and
# the best time of each with its ratio to the first backend. Used for
# BENCHMARKS.md's "WebGPU (lavapipe) against PoCL and the CPU backend": both
# GPU paths run on the host CPU here, so the ratios are the cost of the path,
# not a GPU speed.
#   bash scripts/bench/backends.sh [rounds] [backends] [cases...]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
backends=${2:-cpu,opencl,webgpu}
shift 2 2>/dev/null || shift $#
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(matmul_f32_256 add_f32_16M gelu_f32_16M softmax_f32_4096x4096 layer_norm_f32_4096x4096
                                  qmatvec_q4_1_576x1536 conv2d_f32_n1_c64_h56_k64_r3)
torsh=${TORSH:-build/release/bin/torsh}
[ -n "${XDG_RUNTIME_DIR:-}" ] || export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/torsh-xdg-$(id -u)" && mkdir -p -m 700 "$XDG_RUNTIME_DIR"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
IFS=, read -r -a bes <<<"$backends"
for ((r = 1; r <= rounds; r++)); do
  for c in "${cases[@]}"; do
    for b in "${bes[@]}"; do
      # --json: one object per case, its median time in milliseconds "median_ms".
      "$torsh" bench --backend "$b" --filter "$c" --min-seconds 0.2 --json 2>/dev/null | grep '^{' |
        python3 -c 'import json,sys; [print(sys.argv[1], sys.argv[2], json.loads(l)["median_ms"]) for l in sys.stdin]' "$b" "$c" >>"$out"
    done
  done
done
python3 - "$out" "$backends" <<'PY'
import sys
from collections import defaultdict
best = defaultdict(lambda: float("inf"))
order = []
for line in open(sys.argv[1]):
    b, c, ms = line.split()
    best[(b, c)] = min(best[(b, c)], float(ms))
    if c not in order:
        order.append(c)
bes = sys.argv[2].split(",")
print("| case | " + " | ".join(f"{b} best ms" for b in bes) + " | " + " | ".join(f"{b} / {bes[0]}" for b in bes[1:]) + " |")
print("|---" * (1 + 2 * len(bes) - 1) + "|")
for c in order:
    t = [best[(b, c)] for b in bes]
    print(f"| {c} | " + " | ".join(f"{x:.3f}" for x in t) + " | " + " | ".join(f"{x / t[0]:.1f}x" for x in t[1:]) + " |")
PY
