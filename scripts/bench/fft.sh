#!/usr/bin/env bash
# FFT (c2c, rfft, 2-D c2c; f32) against FFTW (fftw3f, threaded, FFTW_MEASURE;
# scripts/peers/fftw-fft.cpp) and numpy.fft (scripts/peers/numpy-fft.py), in
# interleaved rounds; the best median of each. Needs: a release build,
# libfftw3-dev, python3 with numpy >= 2.
#   bash scripts/bench/fft.sh [rounds]
# FFTW is GPL: it is a benchmark peer only, compiled here into a temporary
# binary, never linked into the library.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
torsh=${TORSH:-build/release/bin/torsh}
[ -n "${XDG_RUNTIME_DIR:-}" ] || export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/torsh-xdg-$(id -u)" && mkdir -p -m 700 "$XDG_RUNTIME_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/results.jsonl
: >"$out"

if ! echo '#include <fftw3.h>' | g++ -E -x c++ - >/dev/null 2>&1; then
  echo "bench/fft.sh: fftw3.h not found; install FFTW: apt-get install libfftw3-dev" >&2
  exit 1
fi
g++ -O2 -march=native -std=c++20 scripts/peers/fftw-fft.cpp -o "$tmp/fftw-fft" \
  -lfftw3f_threads -lfftw3f -lpthread -lm
[ -x "$torsh" ] || echo "bench/fft.sh: $torsh not found; the torsh column will be empty" >&2

peer_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  "${peer_env[@]}" "$torsh" bench --filter fft --min-seconds 0.3 --json 2>/dev/null |
    grep '"name":"r\?fft' >>"$out" || true
  "${peer_env[@]}" "$tmp/fftw-fft" --min-seconds 0.3 >>"$out"
  "${peer_env[@]}" python3 scripts/peers/numpy-fft.py --min-seconds 0.3 >>"$out"
done

echo "CPU: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*:[[:space:]]*//') ($(nproc) cores)"
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
python3 - "$out" <<'PY'
import json, sys
best, fftw_threads = {}, {}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    r = json.loads(line)
    key = (r["name"], r["backend"])
    if r["median_ms"] < best.get(key, float("inf")):
        best[key] = r["median_ms"]
        if r["backend"] == "fftw":
            fftw_threads[r["name"]] = r.get("threads")
sizes = [1 << k for k in (10, 12, 14, 16, 18, 20)]
cases = [f"fft_c2c_f32_{n}" for n in sizes] + [f"rfft_f32_{n}" for n in sizes] + \
        [f"fft2_c2c_f32_{n}" for n in (512, 2048)]
ms = lambda v: "-" if v is None else f"{v:.4g}"
ratio = lambda a, b: "-" if a is None or b is None else f"{a / b:.2f}x"
# "out": the op into an output allocated once (fft_out / rfft_out, out= in
# Python), the counterpart of FFTW's fftw_execute of a ready plan with its
# buffers; "replay": the 1-D transform as a replayed graph (same buffers,
# kernel resolved once).
print("| case | torsh ms | torsh out= ms | torsh replay ms | FFTW ms | numpy ms | FFTW / torsh | FFTW / out= "
      "| FFTW / replay | numpy / torsh |")
print("|---|---|---|---|---|---|---|---|---|---|")
for c in cases:
    t, f, n = best.get((c, "cpu")), best.get((c, "fftw")), best.get((c, "numpy"))
    o, rp = best.get((c + "_out", "cpu")), best.get((c + "_replay", "cpu"))
    print(f"| {c} | {ms(t)} | {ms(o)} | {ms(rp)} | {ms(f)} | {ms(n)} | {ratio(f, t)} | {ratio(f, o)} "
          f"| {ratio(f, rp)} | {ratio(n, t)} |")
by_threads = {}
for c in cases:
    if fftw_threads.get(c) is not None:
        by_threads.setdefault(fftw_threads[c], []).append(c)
if by_threads:
    print()
    print("FFTW threads of the best run: " +
          "; ".join(f"{t}: {', '.join(cs)}" for t, cs in sorted(by_threads.items())))
PY
