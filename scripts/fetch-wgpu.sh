#!/usr/bin/env bash
# Fetches wgpu-native for the WebGPU plugin: the PyPI wheel `wgpu` ships
# libwgpu_native-release.so with the webgpu.h / wgpu.h it was built from. The
# version is pinned (the C API changes between wgpu-native majors) and the
# wheel's SHA-256 checked. Unpacked into build/deps/wgpu-<version>/, which
# CMake finds (TORSH_WGPU_DIR overrides). Does nothing when already there.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.32.0
sha256=6499a31b5a29a10b4f1089fea4a0806411f42605fa86b6c0b543a07ca0de8568
dest=build/deps/wgpu-$version
[ -f "$dest/resources/libwgpu_native-release.so" ] && [ -f "$dest/resources/webgpu.h" ] && exit 0
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=manylinux_2_28_x86_64 ;;
  *) echo "fetch-wgpu: no pinned wgpu-native wheel for $(uname -s)-$(uname -m); the WebGPU plugin is skipped"; exit 0 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary :all: --platform "$platform" \
  "wgpu==$version" -d "$tmp" >/dev/null
wheel=$(ls "$tmp"/wgpu-"$version"-*.whl)
echo "$sha256  $wheel" | sha256sum -c --quiet -
mkdir -p "$dest/resources"
python3 - "$wheel" "$dest/resources" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("libwgpu_native-release.so", "webgpu.h", "wgpu.h"):
        with z.open("wgpu/resources/" + name) as src, open(dest + "/" + name, "wb") as out:
            out.write(src.read())
PY
echo "wgpu-native $version unpacked into $dest/resources"
