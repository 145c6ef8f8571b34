// Quantized-weight cases. qmatvec_*: one token's linear layer (m = 1) over
// copies of the weight that together exceed the last-level cache, as a
// model's layers do, reported as GB/s of weight bytes streamed (compare with
// the peers' stream_triad). qmatmul_*: a prompt of 128 tokens through one
// weight, reported as GFLOP/s of the equivalent dense product (2 m n k).
// matmul_integer_* / qlinear_matmul_*: ONNX's int8 products of n x n u8
// activations by n x n i8 weights (int32 out; u8 out), reported as GOP/s
// (2 n^3), to compare with matmul_f32_n and onnxruntime's QLinearMatMul.
// matmul_integer_i8i8_*: i8 x i8 without zero points, torch._int_mm's case.
// *_prepared_*: the same with the weights prepared once (ops::IntegerWeight).
// *_w7_*: weights of 7 bits ([-64, 63], onnxruntime's reduce_range), which
// CPUs without VNNI multiply with vpmaddubsw exactly (onnxruntime's kernel
// there saturates on full-range weights).
#include <cstring>
#include <random>
#include <vector>

#include "bench_common.hpp"

namespace torsh::cli {
namespace {

// Blocks with random levels and scales of about 2^-6, built as bytes: quantizing
// hundreds of MB of floats would take longer than the measurement.
std::vector<unsigned char> random_blocks(QuantFormat f, std::int64_t rows, std::int64_t cols, unsigned seed) {
  std::vector<unsigned char> b(static_cast<std::size_t>(rows) * quant_row_bytes(f, cols));
  std::mt19937 g(seed);
  for (auto& x : b) x = static_cast<unsigned char>(g());
  const std::size_t bb = quant_block_bytes(f);
  for (std::size_t o = 0; o < b.size(); o += bb) {
    const std::uint16_t d = f32_to_f16(0.015625f * (1.0f + static_cast<float>(g() % 64) / 64.0f));
    std::memcpy(&b[o], &d, 2);
    if (f == QuantFormat::Q4_1) {
      const std::uint16_t m = f32_to_f16(-0.1f);
      std::memcpy(&b[o + 2], &m, 2);
    }
  }
  return b;
}

// The weight bytes the decode cases cycle through: about twice the
// largest last-level cache seen on these machines (260 MiB), and small enough
// that the whole suite stays under scripts/test.sh's 1 GiB resident cap.
constexpr std::size_t kStreamBytes = std::size_t{512} << 20;

void qmatvec(Ctx& c, QuantFormat f, std::int64_t k, std::int64_t n, QuantActivations act = QuantActivations::Int16) {
  const std::string fmt(quant_format_name(f));
  const std::string name = "qmatvec_" + fmt + "_" + std::to_string(k) + "x" + std::to_string(n) +
                           (act == QuantActivations::Int8 ? "_int8" : "");
  if (!wanted(c, name)) return;
  Backend& d = c.dev;
  d.empty_cache();  // what earlier cases left cached would add to these copies' footprint
  const std::vector<unsigned char> bytes = random_blocks(f, n, k, 1);
  const std::size_t copies = std::max<std::size_t>(2, kStreamBytes / bytes.size());
  // One allocation sliced into the copies: the pool rounds each allocation up,
  // which for ~1000 half-megabyte copies would double the footprint.
  const auto rb = static_cast<std::int64_t>(quant_row_bytes(f, k));
  const Tensor store = d.empty(Shape{static_cast<std::int64_t>(copies) * n, rb}, DType::U8);
  Buffer storage = store.buffer();
  for (std::size_t i = 0; i < copies; ++i) storage.copy_from_host(bytes.data(), bytes.size(), i * bytes.size());
  std::vector<QTensor> ws;
  for (std::size_t i = 0; i < copies; ++i) {
    const auto r0 = static_cast<std::int64_t>(i) * n;
    ws.emplace_back(store.slice(0, r0, r0 + n), f, n, k);
  }
  const Tensor x = ops::randn(d, Shape{k}, 2);
  const double ms = median_ms(
      d,
      [&] {
        for (const QTensor& w : ws) ops::matmul_vec(w, x, act);
      },
      15, c.min_seconds);
  const double total = static_cast<double>(bytes.size()) * static_cast<double>(copies);
  emit(c, name, fmt.c_str(), ms / static_cast<double>(copies), "gbps", total / ms / 1e6,
       std::to_string(copies) + " weight copies");
  // The pool would keep the copies cached; the next case's sizes differ, so give them back.
  ws.clear();
  d.empty_cache();
}

void qmatmul(Ctx& c, QuantFormat f, std::int64_t m, std::int64_t k, std::int64_t n) {
  const std::string fmt(quant_format_name(f));
  const std::string name =
      "qmatmul_" + fmt + "_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  if (!wanted(c, name)) return;
  Backend& d = c.dev;
  const std::vector<unsigned char> bytes = random_blocks(f, n, k, 3);
  const QTensor w = QTensor::from_host(d, f, n, k, bytes.data(), bytes.size());
  const Tensor x = ops::randn(d, Shape{m, k}, 4);
  const double ms = median_ms(
      d, [&] { ops::qmatmul(x, w); }, 50, c.min_seconds);
  emit(c, name, fmt.c_str(), ms, "gflops", 2.0 * static_cast<double>(m * n * k) / ms / 1e6);
}

// Random bytes; with seven_bits, i8 values in [-64, 63].
Tensor random_int8(Backend& d, std::int64_t rows, std::int64_t cols, DType t, unsigned seed, bool seven_bits = false) {
  std::vector<unsigned char> v(static_cast<std::size_t>(rows * cols));
  std::mt19937 g(seed);
  for (auto& x : v)
    x = static_cast<unsigned char>(seven_bits ? static_cast<std::int8_t>(static_cast<int>(g() % 128) - 64) : g());
  return d.from_host(v.data(), Shape{rows, cols}, t);
}

void int8_gemm_signed(Ctx& c, std::int64_t n) {
  const std::string name = "matmul_integer_i8i8_" + std::to_string(n);
  if (!wanted(c, name)) return;
  Backend& d = c.dev;
  const Tensor a = random_int8(d, n, n, DType::I8, 7), b = random_int8(d, n, n, DType::I8, 8);
  const double ms = median_ms(
      d, [&] { ops::matmul_integer(a, b); }, n <= 1024 ? 30 : 5, c.min_seconds);
  emit(c, name, "i32", ms, "gops", 2.0 * static_cast<double>(n) * n * n / ms / 1e6);
}

// prepared: b as an ops::IntegerWeight (packed once, as onnxruntime's
// initializers are), the _prepared cases.
void int8_gemm(Ctx& c, std::int64_t n, bool requantize, bool prepared, bool seven_bits = false) {
  const std::string name = std::string(requantize ? "qlinear_matmul" : "matmul_integer") + "_u8i8_" +
                           (prepared ? "prepared_" : "") + (seven_bits ? "w7_" : "") + std::to_string(n);
  if (!wanted(c, name)) return;
  Backend& d = c.dev;
  const Tensor a = random_int8(d, n, n, DType::U8, 5), b = random_int8(d, n, n, DType::I8, 6, seven_bits);
  const ops::IntegerWeight w = prepared ? ops::IntegerWeight(b) : ops::IntegerWeight();
  const unsigned char za = 128, zb = 0, zy = 128;
  const Tensor tza = d.from_host(&za, Shape{}, DType::U8), tzb = d.from_host(&zb, Shape{}, DType::I8),
               tzy = d.from_host(&zy, Shape{}, DType::U8);
  const float sa = 0.02f, sb = 0.01f, sy = 0.5f;
  const Tensor tsa = d.from_host(&sa, Shape{}, DType::F32), tsb = d.from_host(&sb, Shape{}, DType::F32),
               tsy = d.from_host(&sy, Shape{}, DType::F32);
  const double ms = median_ms(
      d,
      [&] {
        if (requantize && prepared)
          ops::qlinear_matmul(a, tsa, tza, w, tsb, tzb, tsy, tzy);
        else if (requantize)
          ops::qlinear_matmul(a, tsa, tza, b, tsb, tzb, tsy, tzy);
        else if (prepared)
          ops::matmul_integer(a, w, tza, tzb);
        else
          ops::matmul_integer(a, b, tza, tzb);
      },
      n <= 1024 ? 30 : 5, c.min_seconds);
  emit(c, name, requantize ? "u8" : "i32", ms, "gops", 2.0 * static_cast<double>(n) * n * n / ms / 1e6);
}

}  // namespace

void bench_quant(Ctx& c) {
  for (bool seven_bits : {false, true})
    for (bool prepared : {false, true}) {
      for (std::int64_t n : {1024, 2048, 4096}) int8_gemm(c, n, false, prepared, seven_bits);
      for (std::int64_t n : {1024, 2048, 4096}) int8_gemm(c, n, true, prepared, seven_bits);
    }
  for (std::int64_t n : {1024, 4096}) int8_gemm_signed(c, n);
  using F = QuantFormat;
  // A small language model's decode shapes: attention and MLP projections, the vocabulary head.
  qmatvec(c, F::Q4_1, 576, 576);
  qmatvec(c, F::Q4_1, 576, 1536);
  qmatvec(c, F::Q4_1, 1536, 576);
  qmatvec(c, F::Q4_0, 576, 1536);
  qmatvec(c, F::Q8_0, 576, 1536);
  qmatvec(c, F::Q5_0, 576, 1536);
  qmatvec(c, F::Q5_1, 576, 1536);
  qmatvec(c, F::Q8_0, 576, 49152);
  for (QuantActivations act : {QuantActivations::Int16, QuantActivations::Int8}) qmatvec(c, F::IQ4_NL, 576, 1536, act);
  // The K formats need rows of a multiple of 256: the MLP's down projection (k = 1536).
  for (F f : {F::Q4_K, F::Q5_K, F::Q6_K}) qmatvec(c, f, 1536, 576);
  // A ~1B model's MLP (hidden 2048, 5632 wide) at both activation widths: the
  // gate/up projections in Q4_K and the down projection in Q6_K, as a Q4_K_M file has them.
  for (QuantActivations act : {QuantActivations::Int16, QuantActivations::Int8}) {
    qmatvec(c, F::Q4_K, 2048, 5632, act);
    qmatvec(c, F::Q6_K, 5632, 2048, act);
  }
  for (F f : kAllQuantFormats)
    if (quant_super_blocks(f))
      qmatmul(c, f, 128, 1536, 576);
    else
      qmatmul(c, f, 128, 576, 1536);
  qmatmul(c, F::Q4_1, 128, 1536, 576);
}

}  // namespace torsh::cli
