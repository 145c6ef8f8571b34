#!/usr/bin/env bash
# Runs the peers (scripts/peers/run.sh: FMA peak, memory bandwidth, OpenBLAS, PyTorch)
# and `torsh bench` in one go on this machine, then prints the comparison table
# used in BENCHMARKS.md. Needs: a Release build (bash scripts/run.sh),
# libopenblas-dev and python3-torch (apt). The OPENBLAS_* overrides of these
# machines are unset for the peers only, as the peers' run.sh does.
#
#   bash scripts/bench/suite.sh [filter] [rounds]
#   PEERS_DIR=DIR bash scripts/bench/suite.sh ...   # another copy of the peers (DIR/run.sh)
#
# Peers and torsh run alternately `rounds` times (default 3) and each side
# keeps its best figure per case: on a shared machine load comes in bursts,
# and interleaving gives both sides the same chance of a quiet moment.
set -euo pipefail
cd "$(dirname "$0")/../.."
peers=${PEERS_DIR:-scripts/peers}
out=${TMPDIR:-/tmp}/torsh-bench; mkdir -p "$out"
filter=${1:-}
rounds=${2:-3}
: > "$out/peers.jsonl"
: > "$out/torsh.jsonl"
for ((r = 1; r <= rounds; r++)); do
  bash "$peers/run.sh" 256 1024 2048 4096 >> "$out/peers.jsonl"
  ./build/release/bin/torsh bench --json ${filter:+--filter "$filter"} >> "$out/torsh.jsonl"
done
/usr/bin/python3 scripts/bench/suite-table.py "$out/peers.jsonl" "$out/torsh.jsonl"
