#!/usr/bin/env bash
# The Python package: a virtual environment in build/pyenv, the build tools
# from PyPI, `pip install .` (the wheel build compiles libtorsh, the plugins
# and the nanobind extension), then the pytest suite in tests/python.
# PyTorch interop tests run only when torch is already importable there
# (its wheels are too large to fetch for CI); they are reported as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/pyenv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
echo "== Python package: build tools"
"$py" -m pip install -q --disable-pip-version-check numpy pytest "nanobind>=2.2" "scikit-build-core>=0.10"
echo "== Python package: pip install ."
# The build dependencies are installed above, so pip needs no isolated build environment.
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  "$py" -m pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps .
echo "== Python package: pytest"
# From outside the source tree, so that the installed package is what gets imported.
cd tests/python
"../../$py" -m pytest -q -ra -p no:cacheprovider "$@"
