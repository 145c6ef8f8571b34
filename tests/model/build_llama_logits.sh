#!/usr/bin/env bash
# Builds tests/model/llama_logits.cpp against a llama.cpp build (static
# libraries, as scripts/bench/llm.sh's llama.cpp is built):
#   bash tests/model/build_llama_logits.sh LLAMA_SRC LLAMA_BUILD OUT
# LLAMA_SRC: llama.cpp's source (vendor/llama.cpp of `pip download --no-deps
# --no-binary :all: llama-cpp-python`); LLAMA_BUILD: its CMake build folder
# (-DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=ON, target llama). Point
# TORSH_LLAMA_LOGITS at OUT for the tests that compare with llama.cpp.
set -euo pipefail
src=$1 build=$2 out=$3
cmake --build "$build" --target llama > /dev/null
g++ -O2 -std=c++17 -I"$src/include" -I"$src/ggml/include" "$(dirname "$0")/llama_logits.cpp" -o "$out" \
  "$build/src/libllama.a" "$build/ggml/src/libggml.a" "$build/ggml/src/libggml-cpu.a" \
  "$build/ggml/src/libggml-base.a" -fopenmp -lpthread -ldl
