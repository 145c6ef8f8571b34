#pragma once
// Contiguous f32 inner loops, compiled once per x86 level (AVX-512, AVX2,
// baseline) through GCC target_clones and picked at load time by the CPU's
// features. The transcendental functions are branch-free so every clone
// vectorises; their accuracy is stated next to each.
#include <cstdint>

#include "torsh/backend/op_args.hpp"

// target_clones dispatches through IFUNC resolvers, which the dynamic loader
// runs before ThreadSanitizer's runtime is up: under TSan the loops are built
// once, for the baseline.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define TORSH_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TORSH_SIMD_CLONES
#endif

namespace torsh::cpu::simd {

// stream: write y around the cache (stream_store.hpp); the caller issues
// stream_fence() before the data is read by another thread.
void unary_f32(rt::UnaryOp op, const float* x, float* y, std::int64_t n, bool stream = false);
// The target_clones loops alone, without the AVX2 bodies of simd_avx2.cpp:
// what CPUs without AVX2 run, callable anywhere so tests check both.
void unary_f32_portable(rt::UnaryOp op, const float* x, float* y, std::int64_t n);
void softmax_row_f32_portable(const float* x, float* y, std::int64_t n, bool log);
void norm_row_f32_portable(const float* x, float* y, const float* w, const float* b, std::int64_t n, float eps,
                           bool rms);
// b_stride is 1 (elementwise) or 0 (b is one scalar broadcast along the run).
// stream: as in unary_f32.
void binary_f32(rt::BinaryOp op, const float* a, const float* b, std::int64_t b_stride, float* out, std::int64_t n,
                bool stream = false);
void binary_f32_portable(rt::BinaryOp op, const float* a, const float* b, std::int64_t b_stride, float* out,
                         std::int64_t n);
// next: the row the caller processes after this one, or null; it is
// prefetched while this row's later passes run from L1.
void softmax_row_f32(const float* x, float* y, std::int64_t n, bool log, const float* next = nullptr);
void norm_row_f32(const float* x, float* y, const float* w, const float* b, std::int64_t n, float eps, bool rms,
                  const float* next = nullptr);
// One flash-attention tile: queries q [nq, D] (pre-scaled) against keys kt
// [D, nk] (transposed) and values v [nk, Dv]. Updates the running row max m,
// row sum l and unnormalised output acc [nq, Dv]. Query i sees keys j < jmax[i].
// s is scratch of nq * nk floats. softcap > 0: each score s becomes
// softcap * tanh(s / softcap) before the softmax.
void attention_tile_f32(const float* q, std::int64_t nq, const float* kt, std::int64_t nk, const float* v,
                        std::int64_t D, std::int64_t Dv, const std::int64_t* jmax, float* s, float* m, float* l,
                        float* acc, float softcap = 0.0f);
// Queries q [nq, D] (pre-scaled) against keys k [nk, D] and values v
// [nk, Dv] of dtype kv (F32, F16 or BF16), both one row per key as a KV cache
// stores them: each score is a dot product along D, so the keys need no
// transpose and one pass over them serves every query row of a head group.
// Query i sees keys j < jmax[i]; m, l, acc and the scratch s as in
// attention_tile_f32. portable: the target_clones loops (on rows widened to
// f32) instead of the AVX-512 bodies that read the cache's dtype directly.
void attention_rows(const float* q, std::int64_t nq, const void* k, const void* v, DType kv, std::int64_t nk,
                    std::int64_t D, std::int64_t Dv, const std::int64_t* jmax, float* s, float* m, float* l, float* acc,
                    bool portable = false, float softcap = 0.0f);
// n contiguous f16 / bf16 values (their bits) widened to f32; the portable
// loop is what CPUs without F16C run, callable anywhere so tests check it.
void widen_f16(const std::uint16_t* x, float* y, std::int64_t n);
void widen_f16_portable(const std::uint16_t* x, float* y, std::int64_t n);
void widen_bf16(const std::uint16_t* x, float* y, std::int64_t n);
// n f32 values rounded to f16 / bf16 bits. The portable forms of both
// directions equal the library's scalar conversions bit for bit (NaN
// payloads included), so casts use them.
void narrow_f16(const float* x, std::uint16_t* y, std::int64_t n);
void narrow_bf16(const float* x, std::uint16_t* y, std::int64_t n);
void adam_f32(float* p, const float* g, float* m, float* v, std::int64_t n, float b1, float b2, float step_size,
              float inv_sqrt_bc2, float eps, float decay, float l2, float grad_scale);

}  // namespace torsh::cpu::simd
