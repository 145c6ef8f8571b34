#!/usr/bin/env bash
# The Python package: a virtual environment in build/pyenv, the build tools
# from PyPI, `pip install .` (the wheel build compiles libtorsh, the plugins
# and the nanobind extension, or only the extension once scripts/test.sh has
# built the Release tree), then the pytest suite in tests/python.
# TORSH_WHEEL_FROM_SCRATCH=1 builds the wheel in its own folder regardless.
# The environment is built on Debian's python3 with its system packages
# visible, so Debian's NumPy and PyTorch (python3-torch; PyPI's wheels are
# gigabytes) are the ones the interop tests exchange memory with. Without
# Debian's python3 the tests run on any python3 and skip the PyTorch part.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/pyenv
if [ -x /usr/bin/apt-get ]; then
  bash scripts/install-deps.sh python3-venv python3-dev python3-numpy python3-scipy python3-torch
  base=/usr/bin/python3
else
  base=python3
fi
if [ ! -x "$venv/bin/python" ]; then
  "$base" -m venv --system-site-packages "$venv"
fi
py="$venv/bin/python"
echo "== Python package: build tools"
# NumPy comes from pip only when the base interpreter lacks it: a newer pip
# NumPy would shadow the one Debian's PyTorch was built against.
"$py" -c "import numpy" 2>/dev/null || "$py" -m pip install -q --disable-pip-version-check numpy
# gguf: the PyPI reader and dequantizer the PyTorch reference model (tests/model) reads weights with.
"$py" -m pip install -q --disable-pip-version-check pytest "nanobind>=2.2" "scikit-build-core>=0.10" "gguf==0.19.0"
echo "== Python package: pip install ."
# The build dependencies are installed above, so pip needs no isolated build environment.
pip_install=("$py" -m pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps)
if [ -f build/release/CMakeCache.txt ] && [ -z "${TORSH_WHEEL_FROM_SCRATCH:-}" ]; then
  # After the Release build (scripts/test.sh): the same `pip install .`, with
  # scikit-build-core pointed at the Release tree, whose libtorsh and plugin
  # objects were compiled with the wheel's own flags, so only the extension
  # compiles; configure, install component, RPATHs and packaging are the
  # wheel's. The Release tree's cache is put back afterwards.
  cp build/release/CMakeCache.txt build/release/CMakeCache.txt.release
  restore() {
    mv -f build/release/CMakeCache.txt.release build/release/CMakeCache.txt
    cmake --preset release >/dev/null
  }
  trap restore EXIT
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "${pip_install[@]}" --config-settings=build-dir=build/release .
  restore
  trap - EXIT
else
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" "${pip_install[@]}" .
fi
echo "== Python package: pytest"
# From outside the source tree, so that the installed package is what gets imported.
cd tests/python
"../../$py" -m pytest -q -ra -p no:cacheprovider "$@"
cd ../..
