#!/usr/bin/env bash
# Installs the Debian packages torsh builds and tests with, only when missing.
# The CUDA toolkit is not a Debian package here: when nvcc is present the CUDA
# plugin is built, otherwise it is skipped and `torsh info` says so. hipcc
# (ROCm 5.2) builds the ROCm plugin from the CUDA sources; no AMD GPU is needed.
# The WebGPU plugin builds against wgpu-native (scripts/fetch-wgpu.sh) and runs
# on Mesa's lavapipe (mesa-vulkan-drivers) where there is no GPU.
set -euo pipefail
# libclblast-dev: the OpenCL plugin's optional GEMM (CLBlast).
# time and python3: scripts/test.sh measures the profiled suite's peak memory and reads its trace;
# clang-format: its format check.
pkgs=(cmake ninja-build g++ pkg-config libgtest-dev libgmock-dev
      ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo libclblast-dev nlohmann-json3-dev libcli11-dev
      hipcc time python3 python3-pip libutf8proc-dev mesa-vulkan-drivers libvulkan1 clang-format)
# Callers add what only they need (the Python tests add the interpreter's packages).
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# wgpu-native for the WebGPU plugin (pinned PyPI wheel; it runs on Mesa's lavapipe here).
bash "$(dirname "$0")/fetch-wgpu.sh"
# Make nvcc visible when the toolkit lives in the usual place but not on PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "note: add /usr/local/cuda/bin to PATH to build the CUDA plugin"
fi
