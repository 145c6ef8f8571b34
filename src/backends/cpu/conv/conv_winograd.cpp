#include "conv_winograd.hpp"

#include <algorithm>
#include <cstring>

#include "../device.hpp"
#include "../gemm/gemm.hpp"
#include "../platform/isa.hpp"
#include "../platform/scratch.hpp"
#include "../platform/thread_pool.hpp"
#include "../simd/simd.hpp"
#include "../simd/simd_avx2.hpp"
#include "../types.hpp"
#include "conv_winograd_rows.hpp"

namespace torsh::cpu {
namespace {

constexpr int kPoints = 16;  // the 4x4 transformed tile
// Scratch of one chunk (its transformed input and products) is kept under
// this; a single row of tiles that needs more runs through the GEMM form.
constexpr std::int64_t kChunkCapBytes = std::int64_t{64} << 20;
// Tiles per chunk aimed at: enough GEMM columns for full-speed panels.
constexpr std::int64_t kChunkTiles = 256;

thread_local Scratch t_u, t_v, t_m, t_rows;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Geometry {
  std::int64_t N, C, H, W, K, P, Q, G, Cg, Kg, pad_h, pad_w;
  std::int64_t TP, TQ;  // tiles down and across one image
  explicit Geometry(const rt::Conv2dArgs& a)
      : N(a.x.shape[0]),
        C(a.x.shape[1]),
        H(a.x.shape[2]),
        W(a.x.shape[3]),
        K(a.w.shape[0]),
        P(a.out.shape[2]),
        Q(a.out.shape[3]),
        G(a.groups),
        Cg(C / G),
        Kg(K / G),
        pad_h(a.pad_h),
        pad_w(a.pad_w),
        TP(ceil_div(P, 2)),
        TQ(ceil_div(Q, 2)) {}
  std::int64_t row_bytes() const { return kPoints * (Cg + Kg) * TQ * static_cast<std::int64_t>(sizeof(float)); }
};

// U[ξ][c] = (G g Gᵀ)[ξ] for the filters g = w[c] of one output channel,
// G = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]; point ξ is xi_stride floats apart.
TORSH_SIMD_CLONES
void transform_filters(const float* w, std::int64_t c0, std::int64_t Cg, std::int64_t xi_stride, float* u) {
  for (std::int64_t c = c0; c < Cg; ++c) {
    const float* g = w + c * 9;
    float h[4][3];
    for (int s = 0; s < 3; ++s) {
      h[0][s] = g[s];
      h[1][s] = 0.5f * (g[s] + g[3 + s] + g[6 + s]);
      h[2][s] = 0.5f * (g[s] - g[3 + s] + g[6 + s]);
      h[3][s] = g[6 + s];
    }
    for (int i = 0; i < 4; ++i) {
      float* ui = u + (i * 4) * xi_stride + c;
      ui[0] = h[i][0];
      ui[xi_stride] = 0.5f * (h[i][0] + h[i][1] + h[i][2]);
      ui[2 * xi_stride] = 0.5f * (h[i][0] - h[i][1] + h[i][2]);
      ui[3 * xi_stride] = h[i][2];
    }
  }
}

// One row of tiles of one channel: rows[i] holds input row 2ty - pad + i,
// zero-padded, from column -pad. V[ξ] of tile tx goes to v[ξ * xi_stride + tx],
// with Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
TORSH_SIMD_CLONES
void transform_input_row(const float* rows, std::int64_t row_len, std::int64_t tx0, std::int64_t TQ, float* v,
                         std::int64_t xi_stride) {
  const float* r0 = rows;
  const float* r1 = rows + row_len;
  const float* r2 = rows + 2 * row_len;
  const float* r3 = rows + 3 * row_len;
  for (std::int64_t tx = tx0; tx < TQ; ++tx) {
    const std::int64_t o = 2 * tx;
    float e[4][4];
    for (int j = 0; j < 4; ++j) {
      e[0][j] = r0[o + j] - r2[o + j];
      e[1][j] = r1[o + j] + r2[o + j];
      e[2][j] = r2[o + j] - r1[o + j];
      e[3][j] = r1[o + j] - r3[o + j];
    }
    for (int i = 0; i < 4; ++i) {
      float* vi = v + (i * 4) * xi_stride + tx;
      vi[0] = e[i][0] - e[i][2];
      vi[xi_stride] = e[i][1] + e[i][2];
      vi[2 * xi_stride] = e[i][2] - e[i][1];
      vi[3 * xi_stride] = e[i][1] - e[i][3];
    }
  }
}

// One row of tiles of one output channel: m[ξ * xi_stride + tx] -> the two
// output rows y0, y1 (2 * TQ values each), with Aᵀ = [1 1 1 0; 0 1 -1 -1].
TORSH_SIMD_CLONES
void transform_output_row(const float* m, std::int64_t xi_stride, std::int64_t tx0, std::int64_t TQ, float* y0,
                          float* y1) {
  for (std::int64_t tx = tx0; tx < TQ; ++tx) {
    float t[16];
    for (int x = 0; x < kPoints; ++x) t[x] = m[x * xi_stride + tx];
    float f[2][4];
    for (int j = 0; j < 4; ++j) {
      f[0][j] = t[j] + t[4 + j] + t[8 + j];
      f[1][j] = t[4 + j] - t[8 + j] - t[12 + j];
    }
    y0[2 * tx] = f[0][0] + f[0][1] + f[0][2];
    y0[2 * tx + 1] = f[0][1] - f[0][2] - f[0][3];
    y1[2 * tx] = f[1][0] + f[1][1] + f[1][2];
    y1[2 * tx + 1] = f[1][1] - f[1][2] - f[1][3];
  }
}

// Tile rows (over the whole batch) per chunk: about kChunkTiles tiles, a
// number of chunks that divides among the threads, within the scratch cap.
std::int64_t rows_per_chunk(const Geometry& g, int threads) {
  const std::int64_t total = g.N * g.TP;
  const std::int64_t cap_rows = std::max<std::int64_t>(1, kChunkCapBytes / g.row_bytes());
  const std::int64_t target = std::clamp<std::int64_t>(ceil_div(kChunkTiles, g.TQ), 1, cap_rows);
  std::int64_t chunks = ceil_div(total, target);
  chunks = std::min(total, ceil_div(chunks, threads) * threads);
  return ceil_div(total, chunks);
}

}  // namespace

bool winograd_fits(const rt::Conv2dArgs& a) {
  if (a.x.dtype != DType::F32 || a.w.shape[2] != 3 || a.w.shape[3] != 3) return false;
  if (a.stride_h != 1 || a.stride_w != 1 || a.dil_h != 1 || a.dil_w != 1) return false;
  return Geometry(a).row_bytes() <= kChunkCapBytes;
}

bool winograd_pays(const rt::Conv2dArgs& a) {
  if (!winograd_fits(a)) return false;
  const Geometry g(a);
  return g.Cg >= 16 && g.Kg >= 16 && g.P >= 4 && g.Q >= 4;
}

void conv2d_winograd(const rt::Conv2dArgs& a) {
  const Geometry g(a);
  const float* x = data_of<float>(a.x);
  const float* w = data_of<float>(a.w);
  float* out = data_of<float>(a.out);
  const int threads = pool().size();
  const bool avx2 = isa_usable(Isa::Avx2);
  const gemm::Kernel& kern = gemm::kernel_for(DType::F32);

  // Filters: transformed, then packed for the GEMM once per call (16 per group).
  const gemm::PackedALayout layout = gemm::packed_a_layout(kern, g.Kg, g.Cg);
  const std::size_t a_stride = (layout.bytes + 63) / 64 * 64;
  const std::size_t u_bytes = (static_cast<std::size_t>(kPoints * g.K * g.Cg) * sizeof(float) + 63) / 64 * 64;
  auto* base = static_cast<char*>(t_u.get(u_bytes + static_cast<std::size_t>(g.G * kPoints) * a_stride));
  auto* u = reinterpret_cast<float*>(base);
  char* u_packed = base + u_bytes;
  // U is [group][ξ][Kg][Cg]; rows of K are transformed in parallel.
  pool().parallel_for(g.K, 8, [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) {
      const std::int64_t gi = k / g.Kg, kk = k % g.Kg;
      float* uk = u + gi * kPoints * g.Kg * g.Cg + kk * g.Cg;
      const std::int64_t done = avx2 ? winograd::filters_avx2(w + k * g.Cg * 9, g.Cg, g.Kg * g.Cg, uk) : 0;
      transform_filters(w + k * g.Cg * 9, done, g.Cg, g.Kg * g.Cg, uk);
    }
  });
  pool().parallel_for(g.G * kPoints, 1, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b)
      gemm::pack_a_all(kern, gemm::Mat{u + b * g.Kg * g.Cg, DType::F32, g.Cg, 1}, g.Kg, g.Cg, u_packed + b * a_stride);
  });

  const std::int64_t total_rows = g.N * g.TP, chunk_rows = rows_per_chunk(g, threads);
  // Padded input row: the tiles' 4-wide windows overlap by 2; the AVX2 body
  // reads up to 16 columns past its last tile's start, hence the round-up.
  const std::int64_t row_len = (2 * g.TQ + 18 + 15) / 16 * 16;
  pool().parallel_for(ceil_div(total_rows, chunk_rows), 1, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t chunk = c0; chunk < c1; ++chunk) {
      const std::int64_t r0 = chunk * chunk_rows, r1 = std::min(total_rows, r0 + chunk_rows);
      const std::int64_t Tc = (r1 - r0) * g.TQ;
      auto* v = static_cast<float*>(t_v.get(static_cast<std::size_t>(kPoints * g.Cg * Tc) * sizeof(float)));
      auto* m = static_cast<float*>(t_m.get(static_cast<std::size_t>(kPoints * g.Kg * Tc) * sizeof(float)));
      auto* rows =
          static_cast<float*>(t_rows.get(static_cast<std::size_t>(4 * row_len + 2 * (2 * g.TQ + 16)) * sizeof(float)));
      float* y0 = rows + 4 * row_len;
      float* y1 = y0 + 2 * g.TQ + 16;
      for (std::int64_t gi = 0; gi < g.G; ++gi) {
        for (std::int64_t c = 0; c < g.Cg; ++c) {
          for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t n = r / g.TP, ty = r % g.TP;
            const float* plane = x + ((n * g.C) + gi * g.Cg + c) * g.H * g.W;
            for (int i = 0; i < 4; ++i) {
              float* dst = rows + i * row_len;
              const std::int64_t h = 2 * ty - g.pad_h + i;
              std::fill(dst, dst + row_len, 0.0f);
              if (h < 0 || h >= g.H) continue;
              const std::int64_t lo = std::max<std::int64_t>(0, -g.pad_w);
              const std::int64_t hi = std::min<std::int64_t>(g.W, row_len - g.pad_w);
              if (hi > lo)
                std::memcpy(dst + lo + g.pad_w, plane + h * g.W + lo,
                            static_cast<std::size_t>(hi - lo) * sizeof(float));
            }
            float* vr = v + c * Tc + (r - r0) * g.TQ;
            const std::int64_t done = avx2 ? winograd::input_row_avx2(rows, row_len, g.TQ, vr, g.Cg * Tc) : 0;
            transform_input_row(rows, row_len, done, g.TQ, vr, g.Cg * Tc);
          }
        }
        for (int xi = 0; xi < kPoints; ++xi) {
          gemm::Problem p;
          p.a = {u + (gi * kPoints + xi) * g.Kg * g.Cg, DType::F32, g.Cg, 1};
          p.a_packed = u_packed + (gi * kPoints + xi) * a_stride;
          p.b = {v + xi * g.Cg * Tc, DType::F32, Tc, 1};
          p.c = m + xi * g.Kg * Tc;
          p.c_dtype = DType::F32;
          p.c_rs = Tc;
          p.c_cs = 1;
          p.m = g.Kg, p.n = Tc, p.k = g.Cg;
          gemm::run_blocked(kern, p, 1);
        }
        for (std::int64_t k = 0; k < g.Kg; ++k) {
          for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t n = r / g.TP, ty = r % g.TP;
            const float* mr = m + k * Tc + (r - r0) * g.TQ;
            const std::int64_t done = avx2 ? winograd::output_row_avx2(mr, g.Kg * Tc, g.TQ, y0, y1) : 0;
            transform_output_row(mr, g.Kg * Tc, done, g.TQ, y0, y1);
            float* plane = out + ((n * g.K) + gi * g.Kg + k) * g.P * g.Q;
            std::memcpy(plane + 2 * ty * g.Q, y0, static_cast<std::size_t>(g.Q) * sizeof(float));
            if (2 * ty + 1 < g.P)
              std::memcpy(plane + (2 * ty + 1) * g.Q, y1, static_cast<std::size_t>(g.Q) * sizeof(float));
          }
        }
      }
    }
  });
  t_u.trim(std::size_t(64) << 20);
}

}  // namespace torsh::cpu
