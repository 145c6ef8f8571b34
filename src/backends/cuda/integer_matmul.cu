// int8 matrix products (ONNX MatMulInteger / QLinearMatMul). On CUDA the
// product runs on the integer tensor cores through cuBLASLt
// (cublas_int8.cpp) on s8 copies where needed (u8 levels shifted by 128, b
// transposed into the layout the tensor cores take), with row sums that
// the finishing kernel turns into the zero-point terms. Where cuBLASLt has
// no kernel, and always on HIP, integer_matmul.kern.h's 64 x 64 tiles run
// (16 x 16 threads, batch in gridDim.z). Absent zero points and scales are
// read from no buffer (count 0); a's buffer stands in for them.
#include "launch.hpp"

#include <algorithm>
#include <climits>
#include <memory>
#include <optional>
#include <string>

#if !defined(TORSH_HIP)
#include "cublas_int8.hpp"
#include "torsh/backend/prepared_operand.hpp"
#endif

#include "backends/gpu/kernels/integer_matmul.kern.h"

namespace torsh::cuda {
namespace {

constexpr std::int64_t kTile = 64, kItems = 16;

// gridDim.y and gridDim.z stop at 65535.
bool fits_grid(const rt::DeviceImpl&, const rt::IntegerMatmulArgs& a) {
  return (a.n + kTile - 1) / kTile <= INT_MAX && (a.m + kTile - 1) / kTile <= 65535 && a.batch <= 65535;
}

#if !defined(TORSH_HIP)
// Stream-ordered scratch, freed on the stream after the work enqueued on it.
struct Scratch {
  CudaStream& s;
  unsigned char* p = nullptr;
  Scratch(CudaStream& st, std::size_t bytes) : s(st) {
    check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&p), bytes, st.handle()),
               "cudaMallocAsync (int8 product scratch)", st.device().label());
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { (void)cudaFreeAsync(p, s.handle()); }
};

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// A prepared weight's transposed s8 copy and column sums on one device
// (rt::PreparedOperand), made on its first product there.
struct PreparedB {
  std::unique_ptr<rt::BufferImpl> memory;  // from the device's allocator: its OutOfMemory error, its cudaFree
  unsigned char* rows = nullptr;           // [n, ldk]
  int* sums = nullptr;                     // [n]
};

// One key per device ordinal for rt::PreparedOperand.
const void* prepared_key(int ordinal) {
  static const char keys[256] = {};
  return &keys[static_cast<unsigned>(ordinal) % 256];
}

bool capturing(const CudaStream& s) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(s.handle(), &st) != cudaSuccess || st != cudaStreamCaptureStatusNone;
}

// The tensor-core route; false (the tiles run instead) where cuBLASLt has
// no kernel or the sizes exceed its int range or the copies' grids.
//
// The tensor cores take the "TN" layout only at full speed: both operands
// with k contiguous. a's rows already are (used in place when s8, k a
// multiple of 16 and aligned); b is copied transposed, which beats
// cuBLASLt's own kernel for row-major b ("NN") (src/backends/gpu/README.md,
// cuda/integer_matmul.cu).
bool tensor_core_route(CudaStream& s, const rt::IntegerMatmulArgs& a) {
  if (a.m == 0 || a.n == 0 || a.k == 0 || a.batch == 0) return false;
  const std::int64_t m = a.m, n = a.n, k = a.k, ldk = (k + 15) / 16 * 16;
  const bool a_u8 = a.a.dtype == DType::U8, b_u8 = a.b.dtype == DType::U8;
  // Whether each side's zero point, shifted with its levels, may be nonzero.
  const bool za = a.a_zero_point.present() || a_u8, zb = a.b_zero_point.present() || b_u8;
  // One b for every batch: the batches are one product with batch * m rows.
  const std::int64_t nb = a.b_batched ? a.batch : 1, rows_a = a.batch * m, gm = a.b_batched ? m : rows_a;
  if (ldk / 32 + 1 > 65535 || nb > 65535 || rows_a + nb * n > INT_MAX || (n + 255) / 256 > INT_MAX) return false;
  const unsigned char* ap = bytes_of(*a.a.buffer) + a.a.offset;
  const unsigned char* bp = bytes_of(*a.b.buffer) + a.b.offset;
  auto* out_i32 = reinterpret_cast<std::int32_t*>(bytes_of(*a.out.buffer)) + a.out.offset;
  // The int32 product goes straight to out where out is int32 and aligned.
  const bool into_out = a.out.dtype == DType::I32 && aligned16(out_i32) && n % 4 == 0;
  const bool a_as_is = !a_u8 && k % 16 == 0 && aligned16(ap);

  // Absent operands are read from no buffer (count 0): a's stands in.
  const auto zp_bytes = [&](const rt::TensorArg& t) -> const unsigned char* {
    return bytes_of(*(t.present() ? t : a.a).buffer);
  };
  const auto off = [](const rt::TensorArg& t) { return long{t.present() ? t.offset : 0}; };
  const auto count = [](const rt::TensorArg& t) { return long{t.present() ? t.numel() : 0}; };
  const auto pack = [&](const unsigned char* src, DType dt, std::int64_t s_batch, std::int64_t s_i, std::int64_t s_k,
                        std::int64_t count, std::int64_t batches, unsigned char* dst) {
    const dim3 grid(static_cast<unsigned>((count + 31) / 32), static_cast<unsigned>((ldk + 31) / 32),
                    static_cast<unsigned>(batches));
    launch(s, TORSH_CUDA_KERNEL(integer_matmul_pack), grid, dim3(32, 8, 1), src, long{0}, gpu::elem_code(dt),
           long{s_batch}, long{s_i}, long{s_k}, dst, long{count}, long{k}, long{ldk});
  };

  // A prepared weight's copy and column sums are made once per device and
  // kept: built on the stream and waited for, so every stream may use them.
  // Not while the stream is being captured into a graph, where nothing may
  // wait: that call copies b as any other.
  std::shared_ptr<const PreparedB> prepared;
  if (a.b_prepared && !a.b_batched && !capturing(s))
    prepared = a.b_prepared->form<PreparedB>(prepared_key(s.device().ordinal()), [&] {
      auto p = std::make_shared<PreparedB>();
      const std::string& dev = s.device().label();
      const std::size_t rows_bytes = static_cast<std::size_t>((n * ldk + 255) / 256 * 256);
      p->memory = s.device().allocate(rows_bytes + static_cast<std::size_t>(n) * 4);
      p->rows = static_cast<unsigned char*>(static_cast<CudaBuffer&>(*p->memory).ptr());
      p->sums = reinterpret_cast<int*>(p->rows + rows_bytes);
      pack(bp, a.b.dtype, 0, 1, n, n, 1, p->rows);
      launch(s, TORSH_CUDA_KERNEL(integer_matmul_row_sums), dim3(static_cast<unsigned>(n), 1, 1), dim3(256, 1, 1),
             static_cast<const unsigned char*>(p->rows), long{ldk}, long{n}, p->sums,
             static_cast<const unsigned char*>(p->rows), long{ldk}, p->sums, long{k}, zp_bytes(a.a_zero_point), long{0},
             long{0}, gpu::elem_code(a.a.dtype), zp_bytes(a.b_zero_point), long{0}, long{0}, gpu::elem_code(a.b.dtype),
             1);
      check_cuda(cudaStreamSynchronize(s.handle()), "cudaStreamSynchronize (prepared int8 weight)", dev);
      return p;
    });

  // One scratch allocation: b's copy, a's copy, the int32 product, the sums.
  const auto up = [](std::int64_t bytes) { return (bytes + 255) / 256 * 256; };
  const std::int64_t b_bytes = prepared ? 0 : up(nb * n * ldk), a_bytes = a_as_is ? 0 : up(rows_a * ldk),
                     prod_bytes = into_out ? 0 : up(rows_a * n * 4), rs_bytes = zb ? up(rows_a * 4) : 0,
                     cs_bytes = za && !prepared ? up(nb * n * 4) : 0;
  Scratch scratch(
      s, static_cast<std::size_t>(std::max<std::int64_t>(1, b_bytes + a_bytes + prod_bytes + rs_bytes + cs_bytes)));
  unsigned char* b_copy = prepared ? prepared->rows : scratch.p;
  unsigned char* a_copy = scratch.p + b_bytes;
  std::int32_t* prod = into_out ? out_i32 : reinterpret_cast<std::int32_t*>(a_copy + a_bytes);
  int* rowsum = reinterpret_cast<int*>(a_copy + a_bytes + prod_bytes);
  int* colsum = prepared ? prepared->sums : reinterpret_cast<int*>(a_copy + a_bytes + prod_bytes + rs_bytes);

  if (!prepared) pack(bp, a.b.dtype, k * n, 1, n, n, nb, b_copy);
  if (!a_as_is && a_u8 && k == ldk && reinterpret_cast<std::uintptr_t>(ap) % 4 == 0) {
    // u8 rows that need no padding: a flip of the top bits, four bytes at a time.
    const std::int64_t words = rows_a * k / 4;
    const auto [grid, block] = grid_1d(s.device(), words);
    launch(s, TORSH_CUDA_KERNEL(integer_matmul_flip), grid, block, reinterpret_cast<const unsigned*>(ap),
           reinterpret_cast<unsigned*>(a_copy), long{words});
  } else if (!a_as_is) {
    pack(ap, a.a.dtype, 0, k, 1, rows_a, 1, a_copy);
  }
  const unsigned char* a_rows = a_as_is ? ap : a_copy;
  const std::int64_t lda = a_as_is ? k : ldk;
  // Row sums of a where b's zero point may be nonzero, of b's copy (b's
  // column sums) where a's may be.
  if (zb || (za && !prepared)) {
    const std::int64_t rows0 = zb ? rows_a : 0, rows1 = za && !prepared ? nb * n : 0;
    launch(s, TORSH_CUDA_KERNEL(integer_matmul_row_sums), dim3(static_cast<unsigned>(rows0 + rows1), 1, 1),
           dim3(256, 1, 1), a_rows, long{lda}, long{rows0}, rowsum, static_cast<const unsigned char*>(b_copy),
           long{ldk}, colsum, long{k}, zp_bytes(a.a_zero_point), off(a.a_zero_point), count(a.a_zero_point),
           gpu::elem_code(a.a.dtype), zp_bytes(a.b_zero_point), off(a.b_zero_point), count(a.b_zero_point),
           gpu::elem_code(a.b.dtype), 0);
  }
  // out^T = b^T a^T in cuBLAS's column-major terms: b's copy transposed (T), a's rows as they are (N).
  if (!cublas_int8_gemm(s, {.a = {b_copy, ldk, true, n * ldk},
                            .b = {a_rows, lda, false, gm * lda},
                            .c = prod,
                            .ldc = n,
                            .c_batch_stride = gm * n,
                            .rows = n,
                            .cols = gm,
                            .k = k,
                            .batch = nb}))
    return false;
  const bool plain = a.out.dtype == DType::I32 && !za && !zb && !a.bias.present();
  if (plain && into_out) return true;
  const auto floats = [&](const rt::TensorArg& t) {
    return reinterpret_cast<const float*>(bytes_of(*(t.present() ? t : a.a).buffer));
  };
  // One item per column; about 2048 work-groups in all, each looping over its share of the rows.
  const std::int64_t col_groups = (n + 255) / 256;
  const dim3 grid(
      static_cast<unsigned>(col_groups),
      static_cast<unsigned>(std::clamp<std::int64_t>(2048 / col_groups, 1, std::min<std::int64_t>(rows_a, 65535))), 1);
  launch(s, TORSH_CUDA_KERNEL(integer_matmul_finish), grid, dim3(256, 1, 1), static_cast<const int*>(prod), rowsum,
         colsum, long{a.b_batched ? n : 0}, gpu::elem_code(a.a.dtype), gpu::elem_code(a.b.dtype),
         zp_bytes(a.a_zero_point), off(a.a_zero_point), count(a.a_zero_point), zp_bytes(a.b_zero_point),
         off(a.b_zero_point), count(a.b_zero_point), floats(a.a_scale), off(a.a_scale), count(a.a_scale),
         floats(a.b_scale), off(a.b_scale), count(a.b_scale), floats(a.y_scale), off(a.y_scale),
         zp_bytes(a.y_zero_point), off(a.y_zero_point), int{a.y_scale.present()},
         reinterpret_cast<const int*>(zp_bytes(a.bias)), off(a.bias), int{a.bias.present()}, bytes_of(*a.out.buffer),
         long{a.out.offset}, gpu::elem_code(a.out.dtype), long{a.batch}, long{m}, long{n}, long{k}, int{into_out});
  return true;
}
#endif

void integer_matmul(CudaStream& s, const rt::IntegerMatmulArgs& a) {
#if !defined(TORSH_HIP)
  if (tensor_core_route(s, a)) return;
#endif
  const auto bytes = [&](const rt::TensorArg& t) -> const unsigned char* {
    return bytes_of(*(t.present() ? t : a.a).buffer);
  };
  const auto floats = [&](const rt::TensorArg& t) {
    return reinterpret_cast<const float*>(bytes_of(*(t.present() ? t : a.a).buffer));
  };
  const auto off = [](const rt::TensorArg& t) { return long{t.present() ? t.offset : 0}; };
  const auto count = [](const rt::TensorArg& t) { return long{t.present() ? t.numel() : 0}; };
  const dim3 grid(static_cast<unsigned>((a.n + kTile - 1) / kTile), static_cast<unsigned>((a.m + kTile - 1) / kTile),
                  static_cast<unsigned>(a.batch));
  launch(s, TORSH_CUDA_KERNEL(integer_matmul_tiles), grid, dim3(kItems, kItems, 1), bytes(a.a), long{a.a.offset},
         gpu::elem_code(a.a.dtype), bytes(a.b), long{a.b.offset}, gpu::elem_code(a.b.dtype),
         long{a.b_batched ? a.k * a.n : 0}, bytes(a.a_zero_point), off(a.a_zero_point), count(a.a_zero_point),
         bytes(a.b_zero_point), off(a.b_zero_point), count(a.b_zero_point), floats(a.a_scale), off(a.a_scale),
         count(a.a_scale), floats(a.b_scale), off(a.b_scale), count(a.b_scale), floats(a.y_scale), off(a.y_scale),
         bytes(a.y_zero_point), off(a.y_zero_point), int{a.y_scale.present()},
         reinterpret_cast<const int*>(bytes(a.bias)), off(a.bias), int{a.bias.present()}, bytes_of(*a.out.buffer),
         long{a.out.offset}, gpu::elem_code(a.out.dtype), long{a.m}, long{a.n}, long{a.k});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IntegerMatmul, entry<rt::OpKind::IntegerMatmul, integer_matmul>>(
      rt::DTypes{DType::I32, DType::U8, DType::I8, DType::F32}, fits_grid, "fewer than 65536 row tiles and batches");
});

}  // namespace
}  // namespace torsh::cuda
