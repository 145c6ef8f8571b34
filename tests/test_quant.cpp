// Block-quantized weights: the host quantizers against the gguf package's
// reference (tests/quant/vectors.bin), QTensor, and the ops on it (qmatmul,
// matmul_vec, dequantize, embedding) on every instruction set this CPU runs,
// against a double-precision reference, plus their errors and the OpenCL
// kernels (within the Int16 bound of the CPU's).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/quant/qmatmul_kernels.hpp"
#include "core/quant_k.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
namespace q = torsh::cpu::quant;

namespace {

// The formats of 32-element blocks (gguf's reference quantizers exist for
// these), and the K formats of 256-element super-blocks.
constexpr QuantFormat k32Formats[] = {QuantFormat::Q4_0, QuantFormat::Q4_1, QuantFormat::Q8_0, QuantFormat::Q5_0,
                                      QuantFormat::Q5_1};
constexpr QuantFormat kKFormats[] = {QuantFormat::Q4_K, QuantFormat::Q5_K, QuantFormat::Q6_K,
                                     QuantFormat::Q2_K, QuantFormat::Q3_K, QuantFormat::IQ4_XS};
// The formats vectors.bin holds random blocks of (gguf dequantizes them but has no quantizer).
constexpr QuantFormat kRandomBlockFormats[] = {QuantFormat::Q4_K,   QuantFormat::Q5_K,   QuantFormat::Q6_K,
                                               QuantFormat::IQ4_NL, QuantFormat::IQ4_XS, QuantFormat::Q2_K,
                                               QuantFormat::Q3_K};

Backend cpu_backend() { return Backend::create(BackendType::Cpu); }

bool opencl_available() {
  const auto av = Backend::available();
  return std::find(av.begin(), av.end(), BackendType::OpenCl) != av.end();
}

template <class F>
void expect_error(ErrorCode code, F&& f, const std::string& needle = "") {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected " << error_code_name(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    if (!needle.empty()) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

std::vector<float> normal(std::size_t n, unsigned seed, float sigma = 1.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

Tensor host_tensor(const std::vector<float>& v, const Shape& s) {
  return cpu_backend().from_host(v.data(), s, DType::F32);
}

// ---- the gguf package's vectors

struct Vectors {
  std::vector<float> x;
  struct Format {
    std::vector<unsigned char> blocks;
    std::vector<float> y;
  } f[std::size(k32Formats)], k[std::size(kRandomBlockFormats)];  // k: random blocks and their dequantization
};

Vectors load_vectors() {
  const std::string path = std::string(TORSH_GOLDEN_DIR) + "/../quant/vectors.bin";
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "missing " << path << " (tests/quant/make_vectors.py writes it)";
  auto u32 = [&] {
    std::uint32_t v = 0;
    in.read(reinterpret_cast<char*>(&v), 4);
    return v;
  };
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "TQV1");
  Vectors v;
  v.x.resize(u32());
  in.read(reinterpret_cast<char*>(v.x.data()), static_cast<std::streamsize>(v.x.size() * 4));
  for (auto& f : v.f) {
    f.blocks.resize(u32());
    in.read(reinterpret_cast<char*>(f.blocks.data()), static_cast<std::streamsize>(f.blocks.size()));
    f.y.resize(v.x.size());
    in.read(reinterpret_cast<char*>(f.y.data()), static_cast<std::streamsize>(f.y.size() * 4));
  }
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "TQK1");
  for (auto& f : v.k) {
    f.blocks.resize(u32());
    in.read(reinterpret_cast<char*>(f.blocks.data()), static_cast<std::streamsize>(f.blocks.size()));
    f.y.resize(u32());
    in.read(reinterpret_cast<char*>(f.y.data()), static_cast<std::streamsize>(f.y.size() * 4));
  }
  EXPECT_TRUE(in) << path << " is truncated";
  return v;
}

// ---- a double-precision reference for qmatmul

// out[i][j] = sum_e w[j][e] * x[i][e] in double, with the bound the kernel's
// result must lie within. The kernel multiplies the weights (exactly the
// dequantized values) by activations rounded to 2L + 1 levels per block
// (Int8: L = 127, Int16: L = 32767): level step d = amax / L, so each
// activation moves by at most d / 2 = amax / 2L, and the product sum by at
// most sum_b amax_b / 2L * sum_e |w_e| (times 1.001 for the rounding of d
// itself). The block sums are then scaled and added in f32: with nb blocks,
// at most about (nb + 4) roundings of 2^-24 relative to sum (|d_w u| + |m_w|)
// |x| (the kernel adds Q4_1's (Q5_1's) d_w u and m_w parts separately, so they may
// cancel only after rounding); Int16's Q4_1 and Q5_1 also sum each block's 32 x in
// f32 for the m_w part: 32 more roundings relative to |m_w| sum |x|.
struct Reference {
  std::vector<double> out, bound;
  std::vector<double> f32_bound;  // the f32 rounding share of bound
};

Reference reference(QuantFormat f, const std::vector<unsigned char>& wq, const std::vector<float>& x, std::int64_t m,
                    std::int64_t n, std::int64_t k, QuantActivations width) {
  const double two_l = width == QuantActivations::Int16 ? 65534.0 : 254.0;
  const std::int64_t nb = k / 32;
  std::vector<float> w(static_cast<std::size_t>(n * k));
  std::vector<float> mins(static_cast<std::size_t>(n * nb), 0.0f);
  const std::size_t rb = quant_row_bytes(f, k);
  for (std::int64_t j = 0; j < n; ++j) {
    dequantize_row(f, wq.data() + j * rb, w.data() + j * k, k);
    if (quant_has_min(f))
      for (std::int64_t b = 0; b < nb; ++b) {
        if (quant_super_blocks(f)) {
          float dw;
          kquant::sub_scales(f, wq.data() + j * rb + b / 8 * quant_block_bytes(f), static_cast<int>(b % 8), dw,
                             mins[j * nb + b]);
          continue;
        }
        std::uint16_t h;
        std::memcpy(&h, wq.data() + j * rb + b * quant_block_bytes(f) + 2, 2);
        mins[j * nb + b] = f16_to_f32(h);
      }
  }
  Reference r;
  r.out.resize(static_cast<std::size_t>(m * n));
  r.bound.resize(r.out.size());
  r.f32_bound.resize(r.out.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0, quant = 0, mag = 0, min_mag = 0;
      for (std::int64_t b = 0; b < nb; ++b) {
        double amax = 0, wabs = 0;
        for (std::int64_t e = b * 32; e < b * 32 + 32; ++e) {
          const double we = w[j * k + e], xe = x[i * k + e], mn = mins[j * nb + b];
          sum += we * xe;
          amax = std::max(amax, std::fabs(xe));
          // Int16's Q4_1 takes m_w times the exact sum of x, so only d_w u meets rounded x.
          wabs += std::fabs(width == QuantActivations::Int16 ? we - mn : we);
          mag += (std::fabs(we - mn) + std::fabs(mn)) * std::fabs(xe);
          min_mag += std::fabs(mn) * std::fabs(xe);
        }
        quant += amax / two_l * wabs;
      }
      r.out[i * n + j] = sum;
      const double sums = width == QuantActivations::Int16 ? 32 * 6e-8 * min_mag : 0.0;
      r.f32_bound[i * n + j] = 6e-8 * static_cast<double>(nb + 4) * mag + sums + 1e-30;
      r.bound[i * n + j] = 1.001 * quant + r.f32_bound[i * n + j];
    }
  return r;
}

std::vector<unsigned char> quantize_host(QuantFormat f, const std::vector<float>& w, std::int64_t n, std::int64_t k) {
  const std::size_t rb = quant_row_bytes(f, k);
  std::vector<unsigned char> b(static_cast<std::size_t>(n) * rb);
  for (std::int64_t j = 0; j < n; ++j) quantize_row(f, w.data() + j * k, b.data() + j * rb, k);
  return b;
}

std::vector<cpu::Isa> usable_isas() {
  std::vector<cpu::Isa> v;
  for (cpu::Isa isa : q::kKernelIsas)
    if (cpu::isa_usable(isa)) v.push_back(isa);
  return v;
}

// Restores cpuid's choice when a test ends, passed or not.
struct ForcedIsa {
  explicit ForcedIsa(cpu::Isa isa) { q::force_isa(isa); }
  ~ForcedIsa() { q::force_isa(std::nullopt); }
};

std::string what(QuantFormat f, std::int64_t m, std::int64_t n, std::int64_t k, cpu::Isa isa, QuantActivations width) {
  return std::string(quant_format_name(f)) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
         " k=" + std::to_string(k) + " " + cpu::isa_name(isa) + " " + std::string(quant_activations_name(width));
}

constexpr QuantActivations kWidths[] = {QuantActivations::Int16, QuantActivations::Int8};

}  // namespace

// ---- formats and the host quantizers

TEST(Quant, FormatNamesAndSizes) {
  for (QuantFormat f : kAllQuantFormats) EXPECT_EQ(quant_format_from_name(quant_format_name(f)), f);
  EXPECT_EQ(quant_format_from_name("Q4_1"), QuantFormat::Q4_1);
  EXPECT_EQ(quant_format_from_name("Q5_1"), QuantFormat::Q5_1);
  EXPECT_EQ(quant_format_from_name("Q4_K"), QuantFormat::Q4_K);
  EXPECT_EQ(quant_format_from_name("q6_k"), QuantFormat::Q6_K);
  EXPECT_EQ(quant_format_from_name("q3_k"), QuantFormat::Q3_K);
  EXPECT_FALSE(quant_format_from_name("iq2_xxs").has_value());
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q4_K, 512), 288u);
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q5_K, 256), 176u);
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q6_K, 1536), 1260u);
  EXPECT_EQ(quant_block_elems(QuantFormat::Q6_K), 256);
  EXPECT_EQ(quant_block_elems(QuantFormat::Q5_1), 32);
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q4_0, 64), 36u);
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q5_0, 64), 44u);
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q5_1, 576), 432u);
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q4_1, 576), 360u);
  EXPECT_EQ(quant_row_bytes(QuantFormat::Q8_0, 1536), 1632u);
}

TEST(Quant, HostQuantizersMatchTheGgufPackageBitForBit) {
  const Vectors v = load_vectors();
  ASSERT_EQ(v.x.size() % 32, 0u);
  const auto k = static_cast<std::int64_t>(v.x.size());
  for (std::size_t fi = 0; fi < std::size(k32Formats); ++fi) {
    const QuantFormat f = k32Formats[fi];
    std::vector<unsigned char> b(quant_row_bytes(f, k));
    quantize_row(f, v.x.data(), b.data(), k);
    ASSERT_EQ(b.size(), v.f[fi].blocks.size()) << quant_format_name(f);
    for (std::size_t i = 0; i < b.size(); ++i)
      ASSERT_EQ(b[i], v.f[fi].blocks[i]) << quant_format_name(f) << " byte " << i << " (block "
                                         << i / quant_block_bytes(f) << ")";
    std::vector<float> y(v.x.size());
    dequantize_row(f, v.f[fi].blocks.data(), y.data(), k);
    for (std::size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(std::memcmp(&y[i], &v.f[fi].y[i], 4), 0)
          << quant_format_name(f) << " element " << i << ": " << y[i] << " vs " << v.f[fi].y[i];
  }
}

TEST(Quant, DequantizeOpMatchesTheReferenceInEveryOutputDType) {
  const Vectors v = load_vectors();
  const std::int64_t rows = 2, cols = static_cast<std::int64_t>(v.x.size()) / 2;
  Backend b = cpu_backend();
  for (std::size_t fi = 0; fi < std::size(k32Formats); ++fi) {
    const QuantFormat f = k32Formats[fi];
    const QTensor w = QTensor::from_host(b, f, rows, cols, v.f[fi].blocks.data(), v.f[fi].blocks.size());
    // quantize() on a tensor gives the same blocks as the host reference.
    const QTensor w2 = QTensor::quantize(host_tensor(v.x, Shape{rows, cols}), f);
    EXPECT_EQ(w2.blocks().to_host<unsigned char>(), v.f[fi].blocks) << quant_format_name(f);
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      const Tensor y = ops::dequantize(w, dt);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(y.shape(), (Shape{rows, cols}));
      const std::vector<float> want =
          dt == DType::F32 ? v.f[fi].y : host_tensor(v.f[fi].y, Shape{rows, cols}).cast(dt).to_vector();
      const std::vector<float> got = y.to_vector();
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0) << quant_format_name(f) << " " << dtype_name(dt) << " " << i;
    }
  }
}

TEST(Quant, KAndIq4DequantizersMatchTheGgufPackageBitForBit) {
  const Vectors v = load_vectors();
  Backend b = cpu_backend();
  for (std::size_t fi = 0; fi < std::size(kRandomBlockFormats); ++fi) {
    const QuantFormat f = kRandomBlockFormats[fi];
    const auto& want = v.k[fi];
    const auto n = static_cast<std::int64_t>(want.y.size());
    ASSERT_EQ(want.blocks.size(), quant_row_bytes(f, n)) << quant_format_name(f);
    std::vector<float> y(want.y.size());
    dequantize_row(f, want.blocks.data(), y.data(), n);
    for (std::size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(std::memcmp(&y[i], &want.y[i], 4), 0)
          << quant_format_name(f) << " element " << i << ": " << y[i] << " vs " << want.y[i];
    // The op, as rows of 512 (two super-blocks each).
    const QTensor w = QTensor::from_host(b, f, n / 512, 512, want.blocks.data(), want.blocks.size());
    EXPECT_EQ(ops::dequantize(w).to_vector(), want.y) << quant_format_name(f);
  }
}

TEST(Quant, KQuantizersKeepEveryElementWithinItsLevelStep) {
  // One pass, not ggml's search (quant.hpp): each element ends within half a
  // level step of its value, the step being the sub-block's stored scale, plus
  // what rounding the 6-bit minimum (Q4_K, Q5_K) adds.
  const std::int64_t k = 1024;
  std::vector<float> x = normal(k, 31, 0.02f);
  for (std::int64_t e = 256; e < 512; ++e) x[e] = std::fabs(x[e]) + 0.5f;  // all positive: the minimum is 0
  for (std::int64_t e = 512; e < 544; ++e) x[e] = 0.0f;                    // a zero sub-block
  for (QuantFormat f :
       {QuantFormat::Q4_K, QuantFormat::Q5_K, QuantFormat::Q6_K, QuantFormat::Q2_K, QuantFormat::Q3_K}) {
    std::vector<unsigned char> blocks(quant_row_bytes(f, k));
    quantize_row(f, x.data(), blocks.data(), k);
    std::vector<float> y(k);
    dequantize_row(f, blocks.data(), y.data(), k);
    for (std::int64_t e = 0; e < k; ++e) {
      const unsigned char* sb = blocks.data() + e / 256 * quant_block_bytes(f);
      const int j = static_cast<int>(e % 256 / 32);
      float dw, mw;
      kquant::sub_scales(f, sb, j, dw, mw);
      double step = std::fabs(dw);
      if (kquant::scales16(f)) step *= std::abs(kquant::scale16(f, sb, j, static_cast<int>(e % 32 / 16)));
      // The minimum is rounded to a 6-bit (Q2_K: 4-bit) multiple of dmin: the
      // levels may fall short of the range's top by that much.
      const double slack = f == QuantFormat::Q2_K ? kquant::half_at(sb + kquant::kQ2D + 2)
                           : kquant::scales16(f)  ? 0.0
                                                  : kquant::half_at(sb + 2);
      // Q6_K's levels run -32 .. 31 (Q3_K's -4 .. 3): a value of the largest
      // magnitude's opposite sign may clamp one step short.
      const double steps = f == QuantFormat::Q6_K || f == QuantFormat::Q3_K ? 1.0 : 0.5;
      ASSERT_LE(std::fabs(y[e] - x[e]), steps * step + slack + 1e-7)
          << quant_format_name(f) << " element " << e << ": " << y[e] << " vs " << x[e];
    }
    // An all-zero sub-block comes back as zeros.
    for (std::int64_t e = 512; e < 544; ++e) ASSERT_EQ(y[e], 0.0f) << quant_format_name(f);
  }
}

TEST(Quant, Iq4QuantizersPickTheNearestLevel) {
  // Each element lands on the level nearest its value under the block's
  // scale: at most half the widest gap between levels (24) away, or, for a
  // value of the sign opposite the block's largest, 14 levels short of 127.
  const std::int64_t k = 512;
  std::vector<float> x = normal(k, 41, 0.02f);
  for (std::int64_t e = 32; e < 64; ++e) x[e] = 0.0f;  // a zero block
  x[300] = std::numeric_limits<float>::quiet_NaN();    // NaN: the level nearest 0
  for (QuantFormat f : {QuantFormat::IQ4_NL, QuantFormat::IQ4_XS}) {
    std::vector<unsigned char> blocks(quant_row_bytes(f, k));
    quantize_row(f, x.data(), blocks.data(), k);
    std::vector<float> y(k);
    dequantize_row(f, blocks.data(), y.data(), k);
    for (std::int64_t e = 0; e < k; ++e) {
      float dw, mw = 0.0f;
      if (f == QuantFormat::IQ4_NL)
        dw = kquant::half_at(blocks.data() + e / 32 * 18);
      else
        kquant::sub_scales(f, blocks.data() + e / 256 * 136, static_cast<int>(e % 256 / 32), dw, mw);
      const float want = e == 300 ? 0.0f : x[e];
      ASSERT_LE(std::fabs(y[e] - want), 14.0 * std::fabs(dw) * 1.0001 + 1e-9)
          << quant_format_name(f) << " element " << e << ": " << y[e] << " vs " << want;
    }
    for (std::int64_t e = 32; e < 64; ++e) ASSERT_EQ(y[e], 0.0f) << quant_format_name(f);
  }
}

// ---- QTensor

TEST(Quant, QTensorChecksItsBlocks) {
  Backend b = cpu_backend();
  const QTensor w = QTensor::quantize(host_tensor(normal(4 * 64, 1), Shape{4, 64}), QuantFormat::Q4_1);
  EXPECT_EQ(w.rows(), 4);
  EXPECT_EQ(w.cols(), 64);
  EXPECT_EQ(w.row_bytes(), 40u);
  EXPECT_EQ(w.nbytes(), 160u);
  EXPECT_EQ(w.describe(), "q4_1[4, 64] on cpu:0");
  EXPECT_EQ(w.blocks().dtype(), DType::U8);
  expect_error(ErrorCode::DTypeMismatch, [&] { QTensor(b.zeros(Shape{4, 40}, DType::I8), QuantFormat::Q4_1, 4, 64); });
  expect_error(
      ErrorCode::ShapeMismatch,
      [&] {
        QTensor(b.zeros(Shape{4, 41}, DType::U8), QuantFormat::Q4_1, 4, 64);
      },
      "[4, 40]");
  expect_error(
      ErrorCode::ShapeMismatch,
      [&] {
        QTensor(b.zeros(Shape{4, 40}, DType::U8), QuantFormat::Q4_1, 4, 48);
      },
      "multiple of 32");
  expect_error(
      ErrorCode::InvalidArgument,
      [&] {
        QTensor(b.zeros(Shape{40, 4}, DType::U8).transpose(0, 1), QuantFormat::Q4_1, 4, 64);
      },
      "contiguous");
  expect_error(
      ErrorCode::ShapeMismatch,
      [&] {
        std::vector<unsigned char> bytes(100);
        QTensor::from_host(b, QuantFormat::Q8_0, 2, 64, bytes.data(), bytes.size());
      },
      "136 bytes");
  expect_error(ErrorCode::ShapeMismatch, [&] {
    QTensor::quantize(b.zeros(Shape{4, 33}, DType::F32), QuantFormat::Q8_0);
  });
  expect_error(ErrorCode::ShapeMismatch, [&] { QTensor::quantize(b.zeros(Shape{64}, DType::F32), QuantFormat::Q8_0); });
  expect_error(ErrorCode::DTypeMismatch, [&] {
    QTensor::quantize(b.zeros(Shape{2, 64}, DType::I32), QuantFormat::Q8_0);
  });
  // A view of a larger buffer (weights inside a file's one allocation) works.
  const std::vector<unsigned char> raw = w.blocks().to_host<unsigned char>();
  std::vector<unsigned char> padded(16, 0);
  padded.insert(padded.end(), raw.begin(), raw.end());
  Tensor all = b.from_host(padded.data(), Shape{static_cast<std::int64_t>(padded.size())}, DType::U8);
  const QTensor view(all.slice(0, 16, all.numel()).reshape({4, 40}), QuantFormat::Q4_1, 4, 64);
  EXPECT_EQ(ops::dequantize(view).to_vector(), ops::dequantize(w).to_vector());
}

// ---- qmatmul

TEST(Quant, QMatmulOnEveryInstructionSetMatchesTheReference) {
  const std::vector<cpu::Isa> isas = usable_isas();
  Backend b = cpu_backend();
  unsigned seed = 100;
  const std::vector<std::int64_t> ks32{32, 64, 96, 576, 1536}, ks_k{256, 1536};
  for (QuantFormat f : kAllQuantFormats)
    for (std::int64_t k : quant_super_blocks(f) ? ks_k : ks32)
      for (std::int64_t n : {1, 5, 63, 64, 1000})
        for (std::int64_t m : {1, 2, 3, 7, 33, 128}) {
          if (m * n * k > 30'000'000 && !(m == 128 && n == 1000 && k == 1536)) continue;  // the big ones once
          const std::vector<float> wf = normal(static_cast<std::size_t>(n * k), ++seed, 0.05f);
          const std::vector<float> x = normal(static_cast<std::size_t>(m * k), ++seed);
          const std::vector<unsigned char> wq = quantize_host(f, wf, n, k);
          const QTensor w = QTensor::from_host(b, f, n, k, wq.data(), wq.size());
          const Tensor xt = host_tensor(x, Shape{m, k});
          for (QuantActivations width : kWidths) {
            const Reference ref = reference(f, wq, x, m, n, k, width);
            std::vector<float> generic;
            for (cpu::Isa isa : isas) {
              const ForcedIsa forced(isa);
              const std::vector<float> got = ops::qmatmul(xt, w, width).to_vector();
              ASSERT_EQ(got.size(), ref.out.size());
              for (std::size_t i = 0; i < got.size(); ++i)
                ASSERT_LE(std::fabs(got[i] - ref.out[i]), ref.bound[i])
                    << what(f, m, n, k, isa, width) << " element " << i << ": " << got[i] << " vs " << ref.out[i];
              // The integer sums are exact everywhere: instruction sets differ
              // only in the order they add scaled block sums.
              if (isa == cpu::Isa::Generic) {
                generic = got;
              } else {
                for (std::size_t i = 0; i < got.size(); ++i)
                  ASSERT_LE(std::fabs(got[i] - generic[i]), 2 * ref.f32_bound[i])
                      << what(f, m, n, k, isa, width) << " vs generic, " << i;
              }
            }
          }
        }
}

TEST(Quant, Int16ActivationsAreFarCloserThanInt8) {
  // The default width's whole point: on typical data its error is hundreds of
  // times smaller than int8's (bounds: 65534 vs 254 levels per block).
  Backend b = cpu_backend();
  const std::int64_t m = 4, n = 64, k = 576;
  const QTensor w = QTensor::quantize(host_tensor(normal(n * k, 21, 0.05f), Shape{n, k}), QuantFormat::Q4_1);
  const std::vector<float> xv = normal(m * k, 22);
  const Tensor x = host_tensor(xv, Shape{m, k});
  const Reference ref =
      reference(QuantFormat::Q4_1, w.blocks().to_host<unsigned char>(), xv, m, n, k, QuantActivations::Int16);
  double err16 = 0, err8 = 0;
  const std::vector<float> y16 = ops::qmatmul(x, w).to_vector(),
                           y8 = ops::qmatmul(x, w, QuantActivations::Int8).to_vector();
  for (std::size_t i = 0; i < y16.size(); ++i) {
    err16 = std::max(err16, std::fabs(y16[i] - ref.out[i]));
    err8 = std::max(err8, std::fabs(y8[i] - ref.out[i]));
  }
  EXPECT_LT(err16 * 30, err8) << "int16 " << err16 << " int8 " << err8;
}

TEST(Quant, QMatmulAgreesWithDequantizeThenMatmul) {
  Backend b = cpu_backend();
  const std::int64_t m = 5, n = 37;
  for (QuantFormat f : kAllQuantFormats)
    for (QuantActivations width : kWidths) {
      const std::int64_t k = quant_super_blocks(f) ? 512 : 192;
      const QTensor w = QTensor::quantize(host_tensor(normal(n * k, 7, 0.1f), Shape{n, k}), f);
      const Tensor x = host_tensor(normal(m * k, 8), Shape{m, k});
      const std::vector<float> got = ops::qmatmul(x, w, width).to_vector();
      const std::vector<float> dense = ops::matmul(x, ops::dequantize(w).transpose(0, 1)).to_vector();
      const Reference ref = reference(f, w.blocks().to_host<unsigned char>(), x.to_vector(), m, n, k, width);
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_LE(std::fabs(got[i] - dense[i]), ref.bound[i] + 1e-5 * std::fabs(dense[i]))
            << quant_format_name(f) << " " << quant_activations_name(width) << " " << i;
    }
}

TEST(Quant, LeadingDimsMatmulVecAndOtherActivationDTypes) {
  Backend b = cpu_backend();
  const std::int64_t n = 70, k = 96;
  const QTensor w = QTensor::quantize(host_tensor(normal(n * k, 9, 0.1f), Shape{n, k}), QuantFormat::Q8_0);
  const std::vector<float> xv = normal(6 * k, 10);
  const Tensor x = host_tensor(xv, Shape{2, 3, k});
  const Tensor y = ops::qmatmul(x, w);
  EXPECT_EQ(y.shape(), (Shape{2, 3, n}));
  EXPECT_EQ(y.to_vector(), ops::qmatmul(x.reshape({6, k}), w).to_vector());
  // A strided x is made contiguous first.
  const Tensor xt = host_tensor(xv, Shape{k, 6}).transpose(0, 1);
  EXPECT_EQ(ops::qmatmul(xt, w).to_vector(), ops::qmatmul(xt.contiguous(), w).to_vector());
  // matmul_vec: one row.
  const Tensor v = x.reshape({6, k}).slice(0, 4, 5).reshape({k});
  const Tensor yv = ops::matmul_vec(w, v);
  EXPECT_EQ(yv.shape(), (Shape{n}));
  const std::vector<float> all = y.to_vector(), one = yv.to_vector();
  EXPECT_EQ(one, std::vector<float>(all.begin() + 4 * n, all.begin() + 5 * n));
  // f16 activations are cast to f32 and the result back.
  const Tensor yh = ops::qmatmul(x.cast(DType::F16), w);
  EXPECT_EQ(yh.dtype(), DType::F16);
  EXPECT_EQ(yh.to_vector(), ops::qmatmul(x.cast(DType::F16).cast(DType::F32), w).cast(DType::F16).to_vector());
  // Empty batches give empty results.
  EXPECT_EQ(ops::qmatmul(b.zeros(Shape{0, k}, DType::F32), w).shape(), (Shape{0, n}));
}

TEST(Quant, ZeroBlocksExtremeValuesAndNaN) {
  Backend b = cpu_backend();
  const std::int64_t m = 3, n = 9, k = 256;
  for (cpu::Isa isa : usable_isas())
    for (QuantActivations width : kWidths) {
      const ForcedIsa forced(isa);
      for (QuantFormat f : kAllQuantFormats) {
        // All-zero weights and activations: exactly zero.
        const QTensor wz = QTensor::quantize(b.zeros(Shape{n, k}, DType::F32), f);
        const Tensor xz = b.zeros(Shape{m, k}, DType::F32);
        for (float y : ops::qmatmul(xz, wz, width).to_vector())
          ASSERT_EQ(y, 0.0f) << quant_format_name(f) << " " << cpu::isa_name(isa) << " "
                             << quant_activations_name(width);
        // Weights near f16's limits, activations up to 1e30 and down to 1e-30
        // (per block: each block has its own scale), zero blocks in between.
        std::vector<float> wv = normal(n * k, 11, 1000.0f), xv = normal(m * k, 12);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t e = 0; e < k; ++e) {
            const std::int64_t blk = e / 32;
            xv[i * k + e] *= blk == 0 ? 1e30f : blk == 1 ? 1e-30f : blk == 2 ? 0.0f : 1.0f;
          }
        const QTensor w = QTensor::quantize(host_tensor(wv, Shape{n, k}), f);
        const std::vector<float> got = ops::qmatmul(host_tensor(xv, Shape{m, k}), w, width).to_vector();
        const Reference ref = reference(f, w.blocks().to_host<unsigned char>(), xv, m, n, k, width);
        for (std::size_t i = 0; i < got.size(); ++i)
          ASSERT_LE(std::fabs(got[i] - ref.out[i]), ref.bound[i])
              << quant_format_name(f) << " " << cpu::isa_name(isa) << " " << quant_activations_name(width) << " " << i;
        // A NaN activation makes its row NaN (and only its row).
        xv[1 * k + 70] = std::numeric_limits<float>::quiet_NaN();
        const std::vector<float> nan_row = ops::qmatmul(host_tensor(xv, Shape{m, k}), w, width).to_vector();
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            EXPECT_EQ(std::isnan(nan_row[i * n + j]), i == 1)
                << quant_format_name(f) << " " << cpu::isa_name(isa) << " " << quant_activations_name(width);
      }
    }
}

TEST(Quant, ThreadCountsGiveTheSameResult) {
  const std::int64_t m = 9, n = 3000, k = 256;
  std::vector<float> results[3];
  const std::vector<float> wv = normal(n * k, 13, 0.1f), xv = normal(m * k, 14);
  int t = 0;
  for (int threads : {1, 2, 3}) {
    Backend b = Backend::builder().backend_type(BackendType::Cpu).num_threads(threads).build();
    const QTensor w = QTensor::quantize(b.from_host(wv.data(), Shape{n, k}, DType::F32), QuantFormat::Q4_0);
    results[t++] = ops::qmatmul(b.from_host(xv.data(), Shape{m, k}, DType::F32), w).to_vector();
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  Backend::builder().backend_type(BackendType::Cpu).num_threads(0).build();  // back to the default
}

// ---- embedding

TEST(Quant, EmbeddingPicksRows) {
  Backend b = cpu_backend();
  const std::int64_t rows = 50, cols = 64;
  const QTensor w = QTensor::quantize(host_tensor(normal(rows * cols, 15), Shape{rows, cols}), QuantFormat::Q4_0);
  const std::vector<float> dense = ops::dequantize(w).to_vector();
  const std::vector<std::int64_t> ids64{3, 49, 0, 3, 17, 8};
  const std::vector<std::int32_t> ids32(ids64.begin(), ids64.end());
  for (DType it : {DType::I32, DType::I64}) {
    const Tensor ids =
        it == DType::I64 ? b.from_host(ids64.data(), Shape{2, 3}, it) : b.from_host(ids32.data(), Shape{2, 3}, it);
    const Tensor e = ops::embedding(w, ids);
    EXPECT_EQ(e.shape(), (Shape{2, 3, cols}));
    const std::vector<float> got = e.to_vector();
    for (std::size_t r = 0; r < ids64.size(); ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(got[r * cols + c], dense[ids64[r] * cols + c]) << dtype_name(it) << " row " << r;
    EXPECT_EQ(ops::embedding(w, ids, DType::BF16).to_vector(), e.cast(DType::BF16).to_vector());
    // Out of range, either side.
    const std::vector<std::int64_t> bad{1, 50};
    expect_error(
        ErrorCode::OutOfRange, [&] { ops::embedding(w, b.from_host(bad.data(), Shape{2}, DType::I64).cast(it)); },
        "id 50 at position 1");
    const std::vector<std::int64_t> neg{-1};
    expect_error(
        ErrorCode::OutOfRange, [&] { ops::embedding(w, b.from_host(neg.data(), Shape{1}, DType::I64).cast(it)); },
        "id -1");
  }
  expect_error(
      ErrorCode::DTypeMismatch, [&] { ops::embedding(w, b.zeros(Shape{2}, DType::F32)); }, "i32 or i64");
  expect_error(ErrorCode::DTypeMismatch, [&] { ops::embedding(w, b.zeros(Shape{2}, DType::I64), DType::I32); });
  EXPECT_EQ(ops::embedding(w, b.zeros(Shape{0}, DType::I64)).shape(), (Shape{0, cols}));
}

// ---- errors

TEST(Quant, BadInputsAreClearErrors) {
  Backend b = cpu_backend();
  const QTensor w = QTensor::quantize(host_tensor(normal(8 * 64, 16), Shape{8, 64}), QuantFormat::Q8_0);
  expect_error(
      ErrorCode::ShapeMismatch,
      [&] {
        ops::qmatmul(b.zeros(Shape{2, 96}, DType::F32), w);
      },
      "takes 64");
  expect_error(
      ErrorCode::DTypeMismatch,
      [&] {
        ops::qmatmul(b.zeros(Shape{2, 64}, DType::I32), w);
      },
      "floating");
  expect_error(ErrorCode::ShapeMismatch, [&] { ops::qmatmul(b.zeros(Shape{}, DType::F32), w); });
  expect_error(
      ErrorCode::ShapeMismatch,
      [&] {
        ops::matmul_vec(w, b.zeros(Shape{2, 64}, DType::F32));
      },
      "x [k]");
  expect_error(ErrorCode::InvalidState, [&] { ops::qmatmul(b.zeros(Shape{2, 64}, DType::F32), QTensor()); });
  expect_error(
      ErrorCode::DTypeMismatch, [&] { ops::dequantize(w, DType::I8); }, "f32, f16 or bf16");
  try {
    ops::qmatmul(b.zeros(Shape{2, 96}, DType::F32), w);
  } catch (const Error& e) {
    EXPECT_EQ(e.context().op, "qmatmul");
    EXPECT_FALSE(e.suggestions().empty());
  }
  EXPECT_TRUE(ops::supports_qmatmul(b, QuantFormat::Q4_1, DType::F32));
  EXPECT_TRUE(ops::supports_qmatmul(b, QuantFormat::Q8_0, DType::BF16));  // cast to f32 by the op
  EXPECT_FALSE(ops::supports_qmatmul(b, QuantFormat::Q4_0, DType::I32));
}

// ---- another device: the blocks are an operand like any other

// The most the CPU's qmatmul (Int16 activations: each x rounded to a level of
// its block's largest |x| / 32767, off by at most half a level) may differ from
// an f32 product with the dequantized weights (quant.kern.h, the GPU kernels):
// sum_b amax_b / 65534 * sum_{i in b} |w_i| per output, plus f32 rounding of both
// sums (k * 2^-23 of sum |x_i w_i|, twice over).
std::vector<double> int16_bound(const std::vector<float>& x, const std::vector<float>& w, std::int64_t m,
                                std::int64_t n, std::int64_t k) {
  std::vector<double> bound(static_cast<std::size_t>(m * n));
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      double level = 0, mag = 0;
      for (std::int64_t b = 0; b < k; b += kQuantBlock) {
        double amax = 0, wsum = 0;
        for (std::int64_t i = b; i < b + kQuantBlock; ++i) {
          amax = std::max(amax, std::fabs(static_cast<double>(x[r * k + i])));
          wsum += std::fabs(w[j * k + i]);
          mag += std::fabs(static_cast<double>(x[r * k + i]) * w[j * k + i]);
        }
        level += amax / 65534.0 * wsum;
      }
      bound[r * n + j] = level + 2.0 * static_cast<double>(k) * std::ldexp(mag, -23);
    }
  return bound;
}

TEST(Quant, OpenCLRunsNatively) {
  if (!opencl_available()) GTEST_SKIP() << "OpenCL backend unavailable";
  Backend cl = Backend::create(BackendType::OpenCl);
  Backend b = cpu_backend();
  for (const auto [m, n, k] : {std::array<std::int64_t, 3>{3, 45, 96}, {1, 1, 32}, {1, 70, 576}, {6, 9, 1536}}) {
    const std::vector<float> wv = normal(n * k, 17, 0.1f), xv = normal(m * k, 18);
    for (QuantFormat f : kAllQuantFormats) {
      if (k % quant_block_elems(f) != 0) continue;
      SCOPED_TRACE(std::string(quant_format_name(f)) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                   " k=" + std::to_string(k));
      const QTensor w = QTensor::quantize(host_tensor(wv, Shape{n, k}), f);
      const QTensor wc = QTensor::quantize(cl.from_host(wv.data(), Shape{n, k}, DType::F32), f);
      EXPECT_EQ(wc.device(), cl.device());
      EXPECT_EQ(wc.blocks().to_host<unsigned char>(), w.blocks().to_host<unsigned char>());
      EXPECT_EQ(w.to(cl).blocks().to_host<unsigned char>(), w.blocks().to_host<unsigned char>());
      EXPECT_TRUE(ops::supports_qmatmul(cl, f, DType::F32));
      EXPECT_TRUE(cl.supports(rt::OpKind::Dequantize, DType::F32));
      EXPECT_TRUE(cl.supports(rt::OpKind::Dequantize, DType::F16));
      EXPECT_TRUE(cl.supports(rt::OpKind::Dequantize, DType::BF16));
      const Tensor xc = cl.from_host(xv.data(), Shape{m, k}, DType::F32);
      ops::reset_fallback_stats();
      const Tensor y = ops::qmatmul(xc, wc);
      const std::vector<std::int32_t> ids{static_cast<std::int32_t>(n - 1), 0, static_cast<std::int32_t>(n / 2)};
      const Tensor e = ops::embedding(wc, cl.from_host(ids.data(), Shape{3}, DType::I32));
      const Tensor d16 = ops::dequantize(wc, DType::F16), d32 = ops::dequantize(wc);
      EXPECT_EQ(y.device(), cl.device());
      EXPECT_EQ(ops::fallback_stats().ops, 0u) << "qmatmul, embedding and dequantize must run on OpenCL";

      const std::vector<float> got = y.to_vector(), cpu = ops::qmatmul(host_tensor(xv, Shape{m, k}), w).to_vector();
      const std::vector<float> wd = ops::dequantize(w).to_vector();
      const std::vector<double> bound = int16_bound(xv, wd, m, n, k);
      ASSERT_EQ(got.size(), cpu.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_LE(std::fabs(static_cast<double>(got[i]) - cpu[i]), bound[i]) << "output " << i;
      EXPECT_EQ(d32.to_vector(), wd);
      EXPECT_EQ(d16.to_host<std::uint16_t>(), ops::dequantize(w, DType::F16).to_host<std::uint16_t>());
      EXPECT_EQ(e.to_vector(), ops::embedding(w, b.from_host(ids.data(), Shape{3}, DType::I32)).to_vector());
      // Operands on two devices are refused, naming both.
      expect_error(
          ErrorCode::DeviceMismatch,
          [&] {
            ops::qmatmul(host_tensor(xv, Shape{m, k}), wc);
          },
          "opencl");
    }
  }
}
