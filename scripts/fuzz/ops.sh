#!/usr/bin/env bash
# The op fuzzer at length (nightly-style): many cases from a random seed on
# every backend present, against NumPy. Needs the Python package built by
# scripts/test-python.sh (build/pyenv). Usage: bash scripts/fuzz/ops.sh [cases] [seed]
set -euo pipefail
cd "$(dirname "$0")/../.."
py=build/pyenv/bin/python
[ -x "$py" ] || { echo "build the Python package first: bash scripts/test-python.sh" >&2; exit 2; }
cases="${1:-100000}"
seed="${2:-$RANDOM}"
echo "op fuzzer: $cases cases per backend, seed $seed"
exec "$py" tests/fuzz/op_fuzz.py --cases "$cases" --seed "$seed"
