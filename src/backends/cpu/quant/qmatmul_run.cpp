// The quantized matmul driver: which instruction set, the activations
// quantized once per call, and the weight rows cut into chunks that threads
// claim from the pool's counter (a thread slowed by another tenant leaves its
// share to the others).
#include <algorithm>
#include <atomic>

#include "../device.hpp"
#include "../platform/cpu_info.hpp"
#include "../platform/isa.hpp"
#include "../platform/scratch.hpp"
#include "../platform/thread_pool.hpp"
#include "../simd/simd_avx2.hpp"
#include "../simd/simd_avx512.hpp"
#include "qmatmul_kernels.hpp"
#include "torsh/core/error.hpp"

namespace torsh::cpu::quant {
namespace {

std::atomic<int> g_forced{-1};

Isa best_isa() {
  static const Isa best = [] {
    for (Isa isa : {Isa::Avx512Vnni, Isa::AvxVnni, Isa::Avx2})
      if (isa_usable(isa)) return isa;
    return Isa::Generic;
  }();
  return best;
}

// A chunk of weight rows stays within this many bytes, so on several
// activation rows it is read from L2 again for each group of them.
constexpr std::size_t kChunkBytes = 128 * 1024;
// From this many activation rows on, a chunk's weight rows are repacked
// (where the kernels can) before the tiles read them once per four rows.
constexpr std::int64_t kPackMinRows = 8;
// Below this much work (weight bytes plus activation multiply-adds / 16) one
// thread finishes before a second would have started.
constexpr std::int64_t kParallelMinWork = 96 * 1024;

}  // namespace

const Kernels& kernels_for(Isa isa) {
  switch (isa) {
    // AVX-512 without VNNI has no integer kernels of its own: every such CPU runs the AVX2 ones.
    case Isa::Avx2:
    case Isa::Avx512:
    case Isa::Avx512Bf16: return kernels_avx2();
    case Isa::AvxVnni: return kernels_avx_vnni();
    case Isa::Avx512Vnni: return kernels_avx512_vnni();
    case Isa::Generic: break;
  }
  return kernels_generic();
}

Isa active_isa() {
  const int f = g_forced.load(std::memory_order_relaxed);
  return f < 0 ? best_isa() : static_cast<Isa>(f);
}

void force_isa(std::optional<Isa> isa) {
  if (isa && !isa_usable(*isa))
    throw Error(ErrorCode::Unsupported, std::string("this CPU cannot run the ") + isa_name(*isa) + " qmatmul kernels",
                {.op = "qmatmul"});
  g_forced.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

void qmatmul(const rt::QMatmulArgs& g) {
  const Kernels& kern = kernels_for(active_isa());
  const std::int64_t m = g.m, n = g.n, k = g.k;
  const float* x = data_of<const float>(g.x);
  const unsigned char* w = data_of<const unsigned char>(g.w);
  float* out = data_of<float>(g.out);
  const std::size_t row_bytes = quant_row_bytes(g.format, k);

  // Some formats' kernels take Int16 activations only (quant_int16_only: an
  // Int8 request gets the more accurate width).
  const QuantActivations width = quant_int16_only(g.format) ? QuantActivations::Int16 : g.activations;
  thread_local Scratch scratch;
  const ActRows act = act_layout(width, scratch.get(act_scratch_bytes(width, m, k)), m, k);
  pool().parallel_for(m, std::max<std::int64_t>(1, 16384 / k),
                      [&](std::int64_t r0, std::int64_t r1) { quantize_act_rows(x, act, g.format, r0, r1); });

  const bool wide = width == QuantActivations::Int16;
  const PackedKernels& packer = wide ? kern.packed16 : kern.packed;
  // Q2_K's per-16 minima, and Int8 Q6_K's per-16 scales, have no place in the
  // packed rows: their tiles read the blocks.
  const bool per16 = quant_has_min16(g.format) || (!wide && g.format == QuantFormat::Q6_K);
  const bool packing = packer.tile && m >= kPackMinRows && !per16;
  const int R = packing ? kern.max_rows : kern.stream_rows(g.format, m), C = kern.max_cols;
  const std::int64_t groups = (n + R - 1) / R;  // of R weight rows
  const std::int64_t work = n * static_cast<std::int64_t>(row_bytes) + n * m * k / 16;
  const int threads = pool().size();
  std::int64_t chunks = 1;
  if (threads > 1 && work >= kParallelMinWork) {
    // A few chunks per thread for balance, each under kChunkBytes.
    const std::int64_t by_size = static_cast<std::int64_t>(n * row_bytes / kChunkBytes) + 1;
    chunks = std::min(groups, std::max<std::int64_t>(3 * threads, by_size));
  }
  auto run_chunk = [&](int c) {
    const std::int64_t i0 = groups * c / chunks * R, i1 = std::min(n, groups * (c + 1) / chunks * R);
    const unsigned char* rows = w + i0 * row_bytes;
    std::size_t stride = row_bytes;
    auto tile = wide ? kern.tile16 : kern.tile;
    if (packing) {
      thread_local Scratch packed;
      stride = packer.row_bytes(g.format, act.nb);
      auto* dst = static_cast<unsigned char*>(packed.get(stride * static_cast<std::size_t>(i1 - i0)));
      packer.pack(g.format, rows, row_bytes, i1 - i0, act.nb, dst);
      rows = dst;
      tile = packer.tile;
    }
    for (std::int64_t j = 0; j < m; j += C)
      for (std::int64_t i = i0; i < i1; i += R) {
        const Tile t{g.format,
                     rows + (i - i0) * stride,
                     stride,
                     static_cast<int>(std::min<std::int64_t>(R, i1 - i)),
                     &act,
                     j,
                     static_cast<int>(std::min<std::int64_t>(C, m - j)),
                     out + i,
                     n};
        tile(t);
      }
  };
  if (chunks == 1) {
    run_chunk(0);
  } else {
    pool().run(static_cast<int>(chunks), run_chunk);
  }
  scratch.trim(std::size_t{64} << 20);
}

}  // namespace torsh::cpu::quant
