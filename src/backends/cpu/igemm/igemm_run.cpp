// The int8 GEMM op (igemm.hpp): operands packed once per call (b once per
// call when it is shared by the batch, once for good when it is a prepared
// weight), then mr x nr tiles over the thread pool, each finished in one
// pass: zero-point terms, then the output dtype's conversion. Products too
// large for the last-level cache run k in blocks (long_k_blocked).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "../device.hpp"
#include "../platform/isa.hpp"
#include "../platform/scratch.hpp"
#include "../platform/thread_pool.hpp"
#include "../quant/qmatmul_kernels.hpp"
#include "../simd/simd.hpp"
#include "../simd/stream_store.hpp"
#include "../types.hpp"
#include "igemm.hpp"
#include "torsh/backend/prepared_operand.hpp"

namespace torsh::cpu::igemm {

const Kernel& active_kernel() {
  static const Kernel& k = []() -> const Kernel& {
    if (isa_usable(Isa::Avx512Vnni)) return kernel_avx512_vnni();
    if (isa_usable(Isa::AvxVnni)) return kernel_avx_vnni();
    if (isa_usable(Isa::Avx2)) return kernel_avx2();
    return kernel_generic();
  }();
  return k;
}

namespace {

// One value per row (or column) of a per-tensor or per-channel parameter.
template <class T, class F>
std::vector<T> expand(const rt::TensorArg& t, std::int64_t count, T absent, F&& value_of) {
  std::vector<T> v(static_cast<std::size_t>(count), absent);
  if (!t.present()) return v;
  for (std::int64_t i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = value_of(t.numel() == 1 ? 0 : i);
  return v;
}

std::int32_t zero_point_at(const rt::TensorArg& t, std::int64_t i) {
  return t.dtype == DType::I8 ? data_of<std::int8_t>(t)[i] : static_cast<std::int32_t>(data_of<std::uint8_t>(t)[i]);
}

// round half to even of v * s, plus z, saturated to [lo, hi], for a row of
// values: |v * s| past 2^22 saturates anyway, so it is clamped first and
// adding and subtracting 1.5 * 2^23 rounds (in the default rounding mode)
// without a library call; a NaN product (scales whose quotient overflowed)
// gives z. Straight-line, so the compiler vectorizes it.
template <class Q>
inline void requantize_row(const std::int32_t* v, const float* s, int count, std::int32_t z, std::int32_t lo,
                           std::int32_t hi, Q* out) {
  for (int j = 0; j < count; ++j) {
    float x = static_cast<float>(v[j]) * s[j];
    x = x != x ? 0.0f : x;
    x = x < -4194304.0f ? -4194304.0f : x > 4194304.0f ? 4194304.0f : x;
    const std::int32_t q = static_cast<std::int32_t>((x + 12582912.0f) - 12582912.0f) + z;
    out[j] = static_cast<Q>(q < lo ? lo : q > hi ? hi : q);
  }
}

// A finished tile's rows, all with the same column multipliers (a's scale
// per tensor): one call a tile, not one a row (a single row when a's scale is
// per row). Compiled per x86 level (simd.hpp's clones): with the baseline's
// 16-byte vectors, requantizing takes a sixth of a 1024^3 QLinearMatMul.
TORSH_SIMD_CLONES void requantize_tile_u8(const std::int32_t* c, int ldc, int rows, int cols, const float* s,
                                          std::int32_t z, std::uint8_t* out, std::int64_t ldo) {
  for (int r = 0; r < rows; ++r) requantize_row(c + r * ldc, s, cols, z, 0, 255, out + r * ldo);
}
TORSH_SIMD_CLONES void requantize_tile_i8(const std::int32_t* c, int ldc, int rows, int cols, const float* s,
                                          std::int32_t z, std::int8_t* out, std::int64_t ldo) {
  for (int r = 0; r < rows; ++r) requantize_row(c + r * ldc, s, cols, z, -128, 127, out + r * ldo);
}
TORSH_SIMD_CLONES void scale_tile_f32(const std::int32_t* c, int ldc, int rows, int cols, const float* s, float* out,
                                      std::int64_t ldo) {
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j) out[r * ldo + j] = static_cast<float>(c[r * ldc + j]) * s[j];
}

// One tile row's sums with the zero-point terms (igemm.hpp), into out or a
// row buffer: restrict-qualified and compiled per x86 level, so it is one
// vector pass (writing into out through unqualified pointers, the compiler
// must assume out might overlap the terms).
TORSH_SIMD_CLONES void finish_row(const std::int32_t* __restrict cr, const std::uint32_t* __restrict ct,
                                  const std::uint32_t* __restrict zbc, const std::uint32_t* __restrict bc,
                                  std::uint32_t zar, std::uint32_t rar, std::uint32_t zb0, bool a_per_row,
                                  bool b_per_col, int cols, std::int32_t* __restrict sum) {
  // Both zero points per tensor: adds only (the general form multiplies per
  // element, which baseline x86-64 has no vector instruction for).
  if (!a_per_row && !b_per_col) {
    const std::uint32_t rowc = rar * zb0;
    for (int j = 0; j < cols; ++j) sum[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(cr[j]) + ct[j] - rowc);
  } else if (!a_per_row) {
    for (int j = 0; j < cols; ++j)
      sum[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(cr[j]) + ct[j] - rar * zbc[j]);
  } else {
    for (int j = 0; j < cols; ++j)
      sum[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(cr[j]) + zar * ct[j] - rar * zbc[j] + bc[j]);
  }
}

// The largest |b'[2t][j]| + |b'[2t + 1][j]| over b [k, n] (b' = b - 128 for
// u8): what one of vpmaddubsw's int16 pair sums can reach per unit of a'.
TORSH_SIMD_CLONES int max_pair_magnitude(const unsigned char* b, std::int64_t k, std::int64_t n, bool b_unsigned) {
  const unsigned char flip = b_unsigned ? 0x80 : 0;
  int best = 0;
  for (std::int64_t t = 0; t < k; t += 2) {
    const unsigned char* r0 = b + t * n;
    const unsigned char* r1 = t + 1 < k ? r0 + n : nullptr;
    std::int16_t m = 0;
    if (r1) {
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int16_t v0 = static_cast<std::int8_t>(static_cast<unsigned char>(r0[j] ^ flip));
        const std::int16_t v1 = static_cast<std::int8_t>(static_cast<unsigned char>(r1[j] ^ flip));
        const std::int16_t s = static_cast<std::int16_t>((v0 < 0 ? -v0 : v0) + (v1 < 0 ? -v1 : v1));
        m = s > m ? s : m;
      }
    } else {
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int16_t v0 = static_cast<std::int8_t>(static_cast<unsigned char>(r0[j] ^ flip));
        const std::int16_t s = static_cast<std::int16_t>(v0 < 0 ? -v0 : v0);
        m = s > m ? s : m;
      }
    }
    best = m > best ? m : best;
  }
  return best;
}

// The largest a' (a + 128 for i8) over `count` bytes.
TORSH_SIMD_CLONES int max_unsigned(const unsigned char* a, std::int64_t count, bool a_signed) {
  const unsigned char flip = a_signed ? 0x80 : 0;
  unsigned char m = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const unsigned char v = static_cast<unsigned char>(a[i] ^ flip);
    m = v > m ? v : m;
  }
  return m;
}

// A prepared weight's pair bound, measured once.
struct PairBound {
  int value = 0;
};

// The kernel for this product: the CPU's best, except that AVX2 without VNNI
// takes its vpmaddubsw tile when no pair of products can saturate it (see
// igemm.hpp). b is scanned once per call (once for good when prepared), a
// only when b alone does not settle it; both scans read each byte once,
// against the product's k reads.
const Kernel& kernel_for(const rt::IntegerMatmulArgs& x) {
  const Kernel& best = active_kernel();
  if (best.lane != Lane::S16x2) return best;
  const bool b_unsigned = x.b.dtype == DType::U8;
  const auto* b = data_of<unsigned char>(x.b);
  const std::int64_t b_count = x.b_batched ? x.batch : 1;
  const auto scan_b = [&] {
    int v = 0;
    for (std::int64_t i = 0; i < b_count; ++i)
      v = std::max(v, max_pair_magnitude(b + i * x.k * x.n, x.k, x.n, b_unsigned));
    return v;
  };
  static const char prepared_key = 0;
  const int pair =
      x.b_prepared && !x.b_batched
          ? x.b_prepared
                ->form<PairBound>(&prepared_key, [&] { return std::make_shared<PairBound>(PairBound{scan_b()}); })
                ->value
          : scan_b();
  constexpr int kInt16Max = 32767;
  if (255 * pair <= kInt16Max) return kernel_avx2_maddubs();
  const int a_max = max_unsigned(data_of<unsigned char>(x.a), x.batch * x.m * x.k, x.a.dtype == DType::I8);
  return a_max * pair <= kInt16Max ? kernel_avx2_maddubs() : best;
}

// b [k, n] in nr-column panels with its column sums (b' as igemm.hpp says).
struct PackedB {
  Scratch panels;
  unsigned char* data = nullptr;  // panels' memory
  std::vector<std::int32_t> sums;
};

void pack_all_b(const Kernel& kn, const unsigned char* b, std::int64_t k, std::int64_t n, bool b_unsigned,
                unsigned char* panels, std::int32_t* sums) {
  const std::int64_t n_panels = (n + kn.nr - 1) / kn.nr;
  const std::size_t pb = panel_bytes(kn, kn.nr, k);
  pool().parallel_for(n_panels, 1, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p)
      pack_b(kn, b, k, n, b_unsigned, p * kn.nr, panels + p * pb, sums + p * kn.nr);
  });
}

// Cache blocking for long k (see integer_matmul): k_groups groups a block,
// so that a b panel's slice is 16 KB (L1); row_panels a panels an item, so
// that their slices are about 192 KB (L2); col_panels b panels an item, so
// that the item's int32 sums are about 256 KB.
struct Blocks {
  std::int64_t k_groups, row_panels, col_panels;
};
Blocks blocks_for(const Kernel& kn) {
  constexpr std::int64_t kBSlice = 16 << 10, kASlices = 192 << 10, kSums = 256 << 10;
  Blocks b{};
  b.k_groups = std::max<std::int64_t>(16, kBSlice / (4 * kn.nr));
  b.row_panels = std::max<std::int64_t>(1, kASlices / (4 * kn.mr * b.k_groups));
  b.col_panels = std::max<std::int64_t>(1, kSums / (4 * kn.mr * b.row_panels * kn.nr));
  return b;
}
// Whether a product whose packed panels take `packed` bytes runs long k in
// blocks: only once the panels outgrow most of the last-level cache. Below
// that, whole-k tiles read a from the cache and write int32 tiles straight
// out, and are the faster; above it blocks win (src/backends/cpu/README.md, igemm).
std::atomic<int> g_force_long_k_blocks{-1};
bool long_k_blocked(std::size_t packed) {
  const int forced = g_force_long_k_blocks.load(std::memory_order_relaxed);
  if (forced >= 0) return forced == 1;
  return static_cast<std::int64_t>(packed) > stream_threshold_bytes() / 4 * 3;
}

}  // namespace

void force_long_k_blocks(int mode) { g_force_long_k_blocks.store(mode, std::memory_order_relaxed); }

void integer_matmul(const rt::IntegerMatmulArgs& x) {
  const Kernel& kn = kernel_for(x);
  const std::int64_t m = x.m, n = x.n, k = x.k;
  const int mr = kn.mr, nr = kn.nr;
  const bool a_signed = x.a.dtype == DType::I8, b_unsigned = x.b.dtype == DType::U8;
  const std::int64_t kpl = k_per_lane(kn.lane), groups = (k + kpl - 1) / kpl;
  const std::int64_t m_panels = (m + mr - 1) / mr, n_panels = (n + nr - 1) / nr;
  const std::size_t pa = panel_bytes(kn, mr, k), pb = panel_bytes(kn, nr, k);
  const Blocks blocks = blocks_for(kn);

  // Packed panels in the calling thread's grow-only scratch: a fresh
  // allocation per call would page-fault its way in every time (a 1024^3
  // product spent a fifth of its time there).
  thread_local Scratch a_scratch, b_scratch;
  constexpr std::size_t kKeep = std::size_t{64} << 20;
  struct Trim {
    ~Trim() {
      a_scratch.trim(kKeep);
      b_scratch.trim(kKeep);
    }
  } trim_after;
  auto* const apack = static_cast<unsigned char*>(a_scratch.get(static_cast<std::size_t>(m_panels) * pa));
  std::vector<std::int32_t> ra(static_cast<std::size_t>(m_panels * mr));
  // A prepared weight's panels are packed on its first product with this
  // kernel and kept; other b's are packed into scratch on every call.
  std::shared_ptr<const PackedB> prepared;
  if (x.b_prepared && !x.b_batched)
    prepared = x.b_prepared->form<PackedB>(&kn, [&] {
      auto p = std::make_shared<PackedB>();
      p->sums.resize(static_cast<std::size_t>(n_panels * nr));
      p->data = static_cast<unsigned char*>(p->panels.get(static_cast<std::size_t>(n_panels) * pb));
      pack_all_b(kn, data_of<unsigned char>(x.b), k, n, b_unsigned, p->data, p->sums.data());
      return p;
    });
  std::vector<std::int32_t> cb_call(prepared ? 0 : static_cast<std::size_t>(n_panels * nr));
  unsigned char* const b_call =
      prepared ? nullptr : static_cast<unsigned char*>(b_scratch.get(static_cast<std::size_t>(n_panels) * pb));
  const unsigned char* const bpack = prepared ? prepared->data : b_call;
  const std::int32_t* const cb = prepared ? prepared->sums.data() : cb_call.data();
  // Padded to whole panels: a tile reads nr column terms and mr row terms.
  std::vector<std::uint32_t> colterm(static_cast<std::size_t>(n_panels * nr)),
      rowterm(static_cast<std::size_t>(m_panels * mr));

  // Zero points of a' and b' (see igemm.hpp), one per row / column.
  const std::vector<std::int32_t> za =
      expand<std::int32_t>(x.a_zero_point, m, 0, [&](std::int64_t i) { return zero_point_at(x.a_zero_point, i); });
  const std::vector<std::int32_t> zb =
      expand<std::int32_t>(x.b_zero_point, n, 0, [&](std::int64_t i) { return zero_point_at(x.b_zero_point, i); });
  std::vector<std::uint32_t> za2(za.size()), zb2(zb.size());
  for (std::size_t i = 0; i < za.size(); ++i) za2[i] = static_cast<std::uint32_t>(za[i] + (a_signed ? 128 : 0));
  for (std::size_t i = 0; i < zb.size(); ++i) zb2[i] = static_cast<std::uint32_t>(zb[i] - (b_unsigned ? 128 : 0));

  const auto f32_of = [](const rt::TensorArg& t) { return [&t](std::int64_t i) { return data_of<float>(t)[i]; }; };
  const std::vector<float> sa = expand<float>(x.a_scale, m, 1.0f, f32_of(x.a_scale));
  const std::vector<float> sb = expand<float>(x.b_scale, n, 1.0f, f32_of(x.b_scale));
  const float sy = x.y_scale.present() ? data_of<float>(x.y_scale)[0] : 1.0f;
  const std::int32_t zy = x.y_zero_point.present() ? zero_point_at(x.y_zero_point, 0) : 0;

  std::vector<std::uint32_t> bias(static_cast<std::size_t>(n), 0u);
  if (x.bias.present())
    for (std::int64_t j = 0; j < n; ++j)
      bias[static_cast<std::size_t>(j)] = static_cast<std::uint32_t>(data_of<std::int32_t>(x.bias)[j]);
  const bool a_zp_per_row = x.a_zero_point.present() && x.a_zero_point.numel() > 1;
  const bool b_zp_per_col = x.b_zero_point.present() && x.b_zero_point.numel() > 1;
  const DType od = x.out.dtype;
  const bool quantized = od == DType::U8 || od == DType::I8;
  const bool a_per_row = x.a_scale.present() && x.a_scale.numel() > 1;
  std::vector<float> col_mul(static_cast<std::size_t>(n));
  for (std::size_t j = 0; j < col_mul.size(); ++j) col_mul[j] = quantized ? (sa[0] * sb[j]) / sy : sa[0] * sb[j];
  // Whether every requantized product is finite and below 2^22 in magnitude
  // (Kernel::requantize's `plain`): each finished sum is at most
  // k 255^2 + |bias| in magnitude where that stays below 2^31 (past it the
  // int32 sums wrap, so anything up to 2^31), and the multipliers are the
  // columns' (a's scale per tensor). With the usual scales every product is.
  bool plain = quantized && !a_per_row;
  if (plain) {
    double bias_max = 0, mul_max = 0;
    if (x.bias.present())
      for (std::int64_t j = 0; j < n; ++j)
        bias_max = std::max(bias_max, std::fabs(static_cast<double>(data_of<std::int32_t>(x.bias)[j])));
    for (const float v : col_mul) {
      if (!std::isfinite(v)) plain = false;
      mul_max = std::max(mul_max, static_cast<double>(std::fabs(v)));
    }
    const double sum_max = std::min(static_cast<double>(k) * 255.0 * 255.0 + bias_max, 2147483648.0);
    // The margin covers the f32 rounding of the sum and of the product.
    plain = plain && sum_max * mul_max < 4194304.0 * 0.99;
  }
  const auto* a_all = data_of<unsigned char>(x.a);
  const auto* b_all = data_of<unsigned char>(x.b);
  const std::uint32_t kk = static_cast<std::uint32_t>(k);
  // The output's address, looked up once: per row it would be a virtual call.
  const std::size_t out_size = dtype_size(od);
  unsigned char* const out_bytes =
      static_cast<unsigned char*>(x.out.buffer->host_ptr()) + static_cast<std::size_t>(x.out.offset) * out_size;

  // Whole-k tiles over more row panels than threads split the rows: each
  // thread packs its own range of a panels and runs its tiles from them, with
  // no barrier between and no panel crossing to another core's cache (a
  // single split by columns has every thread read the a panels all threads
  // packed). Narrow products split by columns.
  const bool long_k = blocks.k_groups < groups && long_k_blocked(m_panels * pa + n_panels * pb);
  const int threads = pool().size();
  const bool row_ranges = !long_k && threads > 1 && m_panels >= 4 * threads;
  const bool fused = !a_zp_per_row && !b_zp_per_col;
  // Both zero points per tensor (the usual case): the tiles add the terms in
  // registers, colterm per column and rowterm per row (rows p * mr .. of panel p).
  const auto pack_rows = [&](const unsigned char* a, std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) {
      pack_a(kn, a, m, k, a_signed, p * mr, apack + p * pa, ra.data() + p * mr);
      if (fused)
        for (std::int64_t r = p * mr; r < (p + 1) * mr; ++r)
          rowterm[static_cast<std::size_t>(r)] =
              0u - static_cast<std::uint32_t>(ra[static_cast<std::size_t>(r)]) * zb2[0];
    }
  };

  for (std::int64_t bi = 0; bi < x.batch; ++bi) {
    const unsigned char* a = a_all + bi * m * k;
    if (!row_ranges) pool().parallel_for(m_panels, 1, [&](std::int64_t p0, std::int64_t p1) { pack_rows(a, p0, p1); });
    if (bi == 0 || x.b_batched) {
      if (!prepared) pack_all_b(kn, b_all + (x.b_batched ? bi * k * n : 0), k, n, b_unsigned, b_call, cb_call.data());
      for (std::int64_t j = 0; j < n; ++j)
        colterm[static_cast<std::size_t>(j)] =
            kk * zb2[static_cast<std::size_t>(j)] - static_cast<std::uint32_t>(cb[j]);
      // a's zero point per tensor (the usual case): its term is one vector,
      // which takes the bias too.
      if (!a_zp_per_row)
        for (std::int64_t j = 0; j < n; ++j)
          colterm[static_cast<std::size_t>(j)] =
              colterm[static_cast<std::size_t>(j)] * za2[0] + bias[static_cast<std::size_t>(j)];
    }
    const std::int64_t out0 = bi * m * n;
    const auto* const col_terms = reinterpret_cast<const std::int32_t*>(colterm.data());
    const auto* const row_terms = reinterpret_cast<const std::int32_t*>(rowterm.data());
    // Finished int32 sums (rows of ldc) scaled into out (rows of n): to f32,
    // or requantized to u8 / s8 by the kernel's own code where it has one.
    const auto store_scaled = [&](const std::int32_t* sums, int ldc, int rows, int cols, const float* mul,
                                  unsigned char* to) {
      if (od == DType::F32)
        scale_tile_f32(sums, ldc, rows, cols, mul, reinterpret_cast<float*>(to), n);
      else if (kn.requantize)
        kn.requantize(sums, ldc, rows, cols, mul, zy, od == DType::U8, to, n, plain);
      else if (od == DType::U8)
        requantize_tile_u8(sums, ldc, rows, cols, mul, zy, reinterpret_cast<std::uint8_t*>(to), n);
      else
        requantize_tile_i8(sums, ldc, rows, cols, mul, zy, reinterpret_cast<std::int8_t*>(to), n);
    };
    // Finished sums of the tile at rows r0.., columns c0.. (c, ldc apart;
    // with the fused terms already added when fused) into out.
    const auto finish_tile = [&](const std::int32_t* c, int ldc, std::int64_t r0, std::int64_t c0, int rows, int cols) {
      unsigned char* const dst = out_bytes + static_cast<std::size_t>(out0 + r0 * n + c0) * out_size;
      if (fused && !a_per_row && od != DType::I32) return store_scaled(c, ldc, rows, cols, col_mul.data() + c0, dst);
      for (int r = 0; r < rows; ++r) {
        const std::size_t row = static_cast<std::size_t>(r0 + r);
        unsigned char* const row_dst = dst + static_cast<std::size_t>(r * n) * out_size;
        const std::int32_t* cr = c + r * ldc;
        const std::int32_t* sum = cr;
        alignas(64) std::int32_t row_buf[64];
        if (!fused) {
          // int32 results go straight to out; others through a row buffer.
          std::int32_t* const s = od == DType::I32 ? reinterpret_cast<std::int32_t*>(row_dst) : row_buf;
          finish_row(cr, colterm.data() + c0, zb2.data() + c0, bias.data() + c0, za2[row],
                     static_cast<std::uint32_t>(ra[row]), zb2[0], a_zp_per_row, b_zp_per_col, cols, s);
          sum = s;
        } else if (od == DType::I32) {
          std::memcpy(row_dst, cr, static_cast<std::size_t>(cols) * sizeof(std::int32_t));
        }
        if (od == DType::I32) continue;
        // The multiplier of each column in this row: precomputed when a's
        // scale is per tensor, else (a_scale[row] * b_scale[col]) / y_scale here.
        alignas(64) float mul_row[64];
        const float* mul = col_mul.data() + c0;
        if (a_per_row) {
          for (int j = 0; j < cols; ++j)
            mul_row[j] = quantized ? (sa[row] * sb[static_cast<std::size_t>(c0 + j)]) / sy
                                   : sa[row] * sb[static_cast<std::size_t>(c0 + j)];
          mul = mul_row;
        }
        store_scaled(sum, cols, 1, cols, mul, row_dst);
      }
    };
    if (long_k) {
      // Long k: blocks of k_groups groups (b's slice of a panel stays in L1),
      // over items of row panels x column panels (a's slices of the item's
      // rows stay in L2), each item's sums held in the thread's int32
      // scratch until its last block. Whole-k tiles read every a panel
      // once per column panel, from memory once a passes the caches: a
      // 4096^3 product at 256 bits spent most of its time waiting on it.
      const std::int64_t row_items = (m_panels + blocks.row_panels - 1) / blocks.row_panels;
      const std::int64_t col_items = (n_panels + blocks.col_panels - 1) / blocks.col_panels;
      const std::int64_t ldc = blocks.col_panels * nr;
      auto* const out_i32 = reinterpret_cast<std::int32_t*>(out_bytes) + out0;
      const auto direct = [&](std::int64_t mp, std::int64_t np) {
        return fused && od == DType::I32 && (mp + 1) * mr <= m && (np + 1) * nr <= n;
      };
      pool().parallel_for(row_items * col_items, 1, [&](std::int64_t i0, std::int64_t i1) {
        thread_local Scratch c_scratch;
        auto* const cbuf = static_cast<std::int32_t*>(
            c_scratch.get(static_cast<std::size_t>(blocks.row_panels * mr * ldc) * sizeof(std::int32_t)));
        for (std::int64_t item = i0; item < i1; ++item) {
          const std::int64_t mp0 = (item / col_items) * blocks.row_panels, np0 = (item % col_items) * blocks.col_panels;
          const std::int64_t mp1 = std::min(m_panels, mp0 + blocks.row_panels),
                             np1 = std::min(n_panels, np0 + blocks.col_panels);
          for (std::int64_t g0 = 0; g0 < groups; g0 += blocks.k_groups) {
            const std::int64_t gn = std::min(blocks.k_groups, groups - g0);
            const bool last = g0 + gn == groups;
            for (std::int64_t np = np0; np < np1; ++np)
              for (std::int64_t mp = mp0; mp < mp1; ++mp) {
                std::int32_t* const c = cbuf + (mp - mp0) * mr * ldc + (np - np0) * nr;
                TileOut to{c,
                           ldc,
                           fused && last ? col_terms + np * nr : nullptr,
                           fused && last ? row_terms + mp * mr : nullptr,
                           g0 > 0 ? c : nullptr,
                           ldc};
                // A whole int32 tile with fused terms is finished straight into out.
                if (last && direct(mp, np)) to.c = out_i32 + (mp * mr) * n + np * nr, to.ldc = n;
                kn.tile(apack + mp * pa + g0 * 4 * mr, bpack + np * pb + g0 * 4 * nr, gn, to);
              }
          }
          for (std::int64_t mp = mp0; mp < mp1; ++mp)
            for (std::int64_t np = np0; np < np1; ++np)
              if (!direct(mp, np))
                finish_tile(cbuf + (mp - mp0) * mr * ldc + (np - np0) * nr, static_cast<int>(ldc), mp * mr, np * nr,
                            static_cast<int>(std::min<std::int64_t>(mr, m - mp * mr)),
                            static_cast<int>(std::min<std::int64_t>(nr, n - np * nr)));
        }
      });
      continue;
    }
    // One whole-k tile, finished into out; c is the caller's mr x nr buffer.
    const auto run_tile = [&](std::int64_t mp, std::int64_t np, std::int32_t* c) {
      const std::int64_t r0 = mp * mr, c0 = np * nr;
      const int rows = static_cast<int>(std::min<std::int64_t>(mr, m - r0));
      const int cols = static_cast<int>(std::min<std::int64_t>(nr, n - c0));
      const TileOut terms{c, nr, fused ? col_terms + c0 : nullptr, fused ? row_terms + r0 : nullptr};
      unsigned char* const dst = out_bytes + static_cast<std::size_t>(out0 + r0 * n + c0) * out_size;
      // This tile's output lines are fetched while its sums run: stored
      // cold, they would be read in at the end with the thread waiting (a
      // tenth of a 1024^3 product).
      for (int r = 0; r < rows; ++r)
        for (int l = 0; l < cols * static_cast<int>(out_size); l += 64)
          __builtin_prefetch(dst + static_cast<std::size_t>(r * n) * out_size + l, 1, 3);
      // A whole int32 tile with fused terms is finished straight into out.
      if (fused && od == DType::I32 && rows == mr && cols == nr) {
        kn.tile(apack + mp * pa, bpack + np * pb, groups,
                TileOut{reinterpret_cast<std::int32_t*>(dst), n, terms.col, terms.row});
        return;
      }
      kn.tile(apack + mp * pa, bpack + np * pb, groups, terms);
      finish_tile(c, nr, r0, c0, rows, cols);
    };
    if (row_ranges) {
      // Thread t's rows are panels [m_panels t / T, m_panels (t + 1) / T),
      // taken in parts of at most kPartBytes of a panels, which stay in L2
      // while every column panel passes over them (the b panel stays in L1
      // over the part): a 2048^3 product's 2 MB of a panels a thread, read
      // whole for each column panel, came from L3. A unit of work is one
      // column panel of one part. A thread done with its own range takes
      // units of ranges already packed: on a shared machine one core can
      // stall for a while, and the other would otherwise wait it out.
      constexpr std::int64_t kPartBytes = 768 << 10;
      const std::int64_t part_panels = std::max<std::int64_t>(1, kPartBytes / static_cast<std::int64_t>(pa));
      struct alignas(64) Range {
        std::atomic<std::int64_t> next{0};
        std::atomic<bool> packed{false};
      };
      std::unique_ptr<Range[]> ranges(new Range[static_cast<std::size_t>(threads)]);
      const auto first_panel = [&](int t) { return m_panels * t / threads; };
      const auto units_of = [&](int t, std::int32_t* c) {
        const std::int64_t mp0 = first_panel(t), mp1 = first_panel(t + 1);
        const std::int64_t units = (mp1 - mp0 + part_panels - 1) / part_panels * n_panels;
        for (std::int64_t u; (u = ranges[t].next.fetch_add(1, std::memory_order_relaxed)) < units;) {
          const std::int64_t p0 = mp0 + u / n_panels * part_panels, p1 = std::min(mp1, p0 + part_panels),
                             np = u % n_panels;
          for (std::int64_t mp = p0; mp < p1; ++mp) run_tile(mp, np, c);
        }
      };
      pool().run(threads, [&](int t) {
        alignas(64) std::int32_t c[14 * 32];
        pack_rows(a, first_panel(t), first_panel(t + 1));
        ranges[t].packed.store(true, std::memory_order_release);
        units_of(t, c);
        // Never wait for a range nobody has packed yet: tasks may run one
        // after another on one thread.
        for (int u = 1; u < threads; ++u) {
          const int v = (t + u) % threads;
          if (ranges[v].packed.load(std::memory_order_acquire)) units_of(v, c);
        }
      });
      continue;
    }
    // Tiles in column-panel order: a thread's run of tiles shares b panels.
    const std::int64_t tiles = m_panels * n_panels;
    const std::int64_t grain = std::max<std::int64_t>(1, tiles / (8 * pool().size()));
    pool().parallel_for(tiles, grain, [&](std::int64_t t0, std::int64_t t1) {
      alignas(64) std::int32_t c[14 * 32];
      for (std::int64_t t = t0; t < t1; ++t) run_tile(t % m_panels, t / m_panels, c);
    });
  }
}

}  // namespace torsh::cpu::igemm
