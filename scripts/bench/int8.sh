#!/usr/bin/env bash
# int8 GEMM against onnxruntime (MatMulInteger / QLinearMatMul, weights as
# initializers) with the weights as plain tensors and prepared once
# (ops::IntegerWeight), and against the project's own f32 GEMM, in interleaved rounds;
# the best median of each. Needs: a release build, python3 with onnxruntime and onnx.
#   bash scripts/bench/int8.sh [rounds] [sizes]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
sizes=${2:-1024,2048,4096}
torsh=${TORSH:-build/release/bin/torsh}
[ -n "${XDG_RUNTIME_DIR:-}" ] || export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/torsh-xdg-$(id -u)" && mkdir -p -m 700 "$XDG_RUNTIME_DIR"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
IFS=, read -r -a ns <<<"$sizes"
for ((r = 1; r <= rounds; r++)); do
  for n in "${ns[@]}"; do
    for c in matmul_integer_u8i8_$n qlinear_matmul_u8i8_$n matmul_integer_u8i8_prepared_$n \
      qlinear_matmul_u8i8_prepared_$n matmul_integer_u8i8_w7_$n qlinear_matmul_u8i8_w7_$n \
      matmul_integer_u8i8_prepared_w7_$n qlinear_matmul_u8i8_prepared_w7_$n matmul_f32_$n; do
      "$torsh" bench --filter "$c" --min-seconds 0.3 --json 2>/dev/null | grep "\"name\":\"$c\"" >>"$out" || true
    done
  done
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 scripts/peers/ort-int8.py --sizes "$sizes" >>"$out"
done
python3 - "$out" "$sizes" <<'PY'
import json, sys
best, notes = {}, {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["name"], r["backend"])
    best[key] = min(best.get(key, float("inf")), r["median_ms"])
    if r["backend"] == "onnxruntime":
        notes[r["name"]] = r.get("note", "")
print("| case | torsh best ms | torsh, prepared weight, best ms | onnxruntime best ms | torsh f32 GEMM best ms "
      "| onnxruntime / torsh | onnxruntime / torsh prepared | f32 / int8 |")
print("|---|---|---|---|---|---|---|---|")
for n in sys.argv[2].split(","):
    f32 = best.get((f"matmul_f32_{n}", "cpu"))
    for w7 in ("", "w7_"):
        for op in ("matmul_integer", "qlinear_matmul"):
            name = f"{op}_u8i8_{w7}{n}"
            t, o = best.get((name, "cpu")), best.get((name, "onnxruntime"))
            p = best.get((f"{op}_u8i8_prepared_{w7}{n}", "cpu"))
            if None in (t, o, p, f32):
                continue
            print(f"| {name} | {t:.3f} | {p:.3f} | {o:.3f} | {f32:.3f} | {o / t:.2f}x | {o / p:.2f}x | {f32 / t:.2f}x |")
print()
for name, note in sorted(notes.items()):
    if name.startswith("matmul_integer"):
        print(f"onnxruntime {name}: {note}")
PY
