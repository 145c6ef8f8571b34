#!/usr/bin/env bash
# The main job: install what is missing, fetch the model once (SmolLM2-135M-Instruct,
# Q4_1 GGUF, into ~/.cache/torsh/models), build (Release) the library, the CLI and the
# plugins for the devices this machine has, print `torsh info`, then answer a chat
# prompt with the model, ending with prompt and generation tokens/s.
#
# The CUDA and ROCm plugins take most of a full build's compile time (nvcc and hipcc,
# several GPU architectures each); without an NVIDIA or AMD GPU they could only say
# "no device", so they are left out here (`torsh info` names the option that builds
# them) and scripts/test.sh builds them whenever their toolchains are present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/fetch-model.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
gpu_options=()
if [ ! -e /dev/nvidiactl ] && ! command -v nvidia-smi >/dev/null; then
  gpu_options+=(-DTORSH_CUDA=OFF)
  echo "run.sh: no NVIDIA GPU here (no /dev/nvidiactl): the CUDA plugin is left out of this build"
fi
if [ ! -e /dev/kfd ]; then
  gpu_options+=(-DTORSH_ROCM=OFF)
  echo "run.sh: no AMD GPU here (no /dev/kfd): the ROCm plugin is left out of this build"
fi
cmake --preset release "${gpu_options[@]}" >/dev/null
# The CLI and every plugin target this configuration has (CMake leaves out
# those whose toolchain is missing).
targets=(torsh_cli)
for plugin in opencl webgpu cuda rocm; do
  ninja -C build/release -t query "torsh_backend_$plugin" >/dev/null 2>&1 && targets+=("torsh_backend_$plugin")
done
cmake --build --preset release -j"$(nproc)" --target "${targets[@]}"
./build/release/bin/torsh info
./build/release/bin/torsh run --chat --max-tokens 96 --prompt "${TORSH_PROMPT:-What is the capital of France, and why is it famous?}"
