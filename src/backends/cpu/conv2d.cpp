// conv2d as a GEMM: each (image, group) multiplies the [K/g, C/g * R * S]
// filter by the [C/g * R * S, P * Q] column matrix of its input, so
// convolution speed follows GEMM speed. The GEMM packs the columns straight
// from the image (conv_columns.hpp); pointwise convolutions (1x1, stride 1,
// no padding) read the image as the matrix itself.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "conv/conv_columns.hpp"
#include "conv/conv_winograd.hpp"
#include "device.hpp"
#include "gemm/gemm.hpp"
#include "platform/scratch.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

// A view of host memory that kernels can wrap as a TensorArg.
class HostView final : public rt::BufferImpl {
 public:
  HostView(void* p, std::size_t bytes) : p_(p), bytes_(bytes) {}
  std::size_t size() const override { return bytes_; }
  void* host_ptr() const override { return p_; }

 private:
  void* p_;
  std::size_t bytes_;
};

// The column matrix of the calling thread, kept between calls up to this size.
thread_local Scratch t_col, t_filter;
constexpr std::size_t kKeepColBytes = std::size_t(64) << 20;
// Below this many multiply-adds (~15 us on one core) a GEMM stays on one thread.
constexpr std::int64_t kParallelMinMacs = 96 * 96 * 96;

rt::TensorArg view(rt::BufferImpl* buf, DType dt, std::int64_t offset, std::int64_t batch, std::int64_t rows,
                   std::int64_t cols, std::int64_t bstride) {
  rt::TensorArg t;
  t.buffer = buf;
  t.dtype = dt;
  t.shape = Shape{batch, rows, cols};
  t.strides = {bstride, cols, 1};
  t.offset = offset;
  return t;
}

// Row (c, r, s) of the column matrix holds, for each output pixel (p, q), the
// input pixel it sees through filter tap (r, s). Along q the taps that fall
// in the image form one range: padding on either side is zero-filled and the
// range is a plain copy when the stride is 1.
template <class T>
void im2col(const T* x, T* col, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t R, std::int64_t S,
            std::int64_t P, std::int64_t Q, const rt::Conv2dArgs& a) {
  const T zero = from_acc<T>(0.0f);
  pool().parallel_for(C * R * S, 4, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t row = r0; row < r1; ++row) {
      const std::int64_t c = row / (R * S), r = (row / S) % R, s = row % S;
      const std::int64_t w0 = -a.pad_w + s * a.dil_w;
      // First and one-past-last q whose input column w0 + q * stride lies in [0, W).
      const std::int64_t q_lo = std::min(Q, w0 >= 0 ? 0 : (-w0 + a.stride_w - 1) / a.stride_w);
      const std::int64_t q_hi = std::max(q_lo, std::min(Q, W - w0 > 0 ? (W - w0 + a.stride_w - 1) / a.stride_w : 0));
      T* dst = col + row * P * Q;
      for (std::int64_t p = 0; p < P; ++p) {
        const std::int64_t h = p * a.stride_h - a.pad_h + r * a.dil_h;
        T* d = dst + p * Q;
        if (h < 0 || h >= H) {
          std::fill(d, d + Q, zero);
          continue;
        }
        const T* src = x + (c * H + h) * W;
        std::fill(d, d + q_lo, zero);
        if (a.stride_w == 1) {
          std::copy(src + w0 + q_lo, src + w0 + q_hi, d + q_lo);
        } else {
          for (std::int64_t q = q_lo; q < q_hi; ++q) d[q] = src[w0 + q * a.stride_w];
        }
        std::fill(d + q_hi, d + Q, zero);
      }
    }
  });
}

bool is_pointwise(const rt::Conv2dArgs& a) {
  return a.w.shape[2] == 1 && a.w.shape[3] == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 0 && a.pad_w == 0;
}

// Whether the GEMM packs the columns straight from the image.
template <class T>
bool implicit_columns(const rt::Conv2dArgs& a) {
  return !is_pointwise(a) && !std::is_same_v<T, double> &&
         a.x.shape[2] * a.x.shape[3] <= std::numeric_limits<std::int32_t>::max();
}

// One image's (one group's) GEMM: out[K/g, P*Q] = w[K/g, C/g*R*S] · columns.
// f32, f16 and bf16 pack the columns straight from the image (ConvColumns);
// f64, which has no packed kernels, unfolds them into a matrix first.
template <class T>
void run_image(const rt::Conv2dArgs& a, std::int64_t n, int threads, const char* w_packed, std::size_t w_packed_group) {
  const std::int64_t C = a.x.shape[1], H = a.x.shape[2], W = a.x.shape[3];
  const std::int64_t K = a.w.shape[0], R = a.w.shape[2], S = a.w.shape[3];
  const std::int64_t P = a.out.shape[2], Q = a.out.shape[3], G = a.groups;
  const std::int64_t Cg = C / G, Kg = K / G, CRS = Cg * R * S, PQ = P * Q;
  const bool pointwise = is_pointwise(a);
  const bool implicit = implicit_columns<T>(a);
  const T* x = data_of<T>(a.x);
  const T* w = data_of<T>(a.w);
  T* y = data_of<T>(a.out);
  const ConvGeometry geo{Cg, H, W, R, S, P, Q, a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.dil_h, a.dil_w};
  for (std::int64_t g = 0; g < G; ++g) {
    const T* xg = x + (n * C + g * Cg) * H * W;
    if (implicit) {
      const ConvColumns cols(xg, a.x.dtype, geo);
      gemm::Problem p;
      p.a = {w + g * Kg * CRS, a.w.dtype, CRS, 1};
      p.b_source = &cols;
      p.a_packed = w_packed ? w_packed + g * w_packed_group : nullptr;
      p.c = y + (n * K + g * Kg) * PQ;
      p.c_dtype = a.out.dtype;
      p.c_rs = PQ;
      p.c_cs = 1;
      p.m = Kg, p.n = PQ, p.k = CRS;
      gemm::run_blocked(gemm::kernel_for(a.x.dtype), p, Kg * PQ * CRS < kParallelMinMacs ? 1 : threads);
      continue;
    }
    const std::size_t col_bytes = pointwise ? 0 : static_cast<std::size_t>(CRS * PQ) * sizeof(T);
    HostView col(pointwise ? nullptr : t_col.get(col_bytes), col_bytes);
    rt::MatmulArgs mm;
    mm.a = view(a.w.buffer, a.w.dtype, a.w.offset + g * Kg * CRS, 1, Kg, CRS, 0);
    if (pointwise) {
      mm.b = view(a.x.buffer, a.x.dtype, a.x.offset + (n * C + g * Cg) * H * W, 1, CRS, PQ, 0);
    } else {
      im2col(xg, static_cast<T*>(col.host_ptr()), Cg, H, W, R, S, P, Q, a);
      mm.b = view(&col, a.x.dtype, 0, 1, CRS, PQ, 0);
    }
    mm.out = view(a.out.buffer, a.out.dtype, a.out.offset + (n * K + g * Kg) * PQ, 1, Kg, PQ, 0);
    matmul(mm);
    t_col.trim(kKeepColBytes);
  }
}

template <class T>
void add_bias(const rt::Conv2dArgs& a) {
  if (!a.bias.present()) return;
  const std::int64_t N = a.x.shape[0], K = a.w.shape[0], PQ = a.out.shape[2] * a.out.shape[3];
  const T* b = data_of<T>(a.bias);
  T* y = data_of<T>(a.out);
  pool().parallel_for(N * K, 1, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const auto bv = to_acc(b[r % K]);
      T* yr = y + r * PQ;
      for (std::int64_t i = 0; i < PQ; ++i) yr[i] = from_acc<T>(to_acc(yr[i]) + bv);
    }
  });
}

template <class T>
void run(const rt::Conv2dArgs& a) {
  const std::int64_t N = a.x.shape[0], K = a.w.shape[0];
  const std::int64_t G = a.groups, Kg = K / G, CRS = a.w.shape[1] * a.w.shape[2] * a.w.shape[3];
  const int threads = pool().size();
  const bool winograd = a.algo == rt::ConvAlgo::Winograd || (a.algo == rt::ConvAlgo::Auto && winograd_pays(a));
  if (winograd && winograd_fits(a)) {
    conv2d_winograd(a);
    add_bias<T>(a);
    return;
  }
  // Several images share the filter: pack it for the GEMM once per call.
  const char* w_packed = nullptr;
  std::size_t w_group = 0;
  if (N > 1 && implicit_columns<T>(a)) {
    const gemm::Kernel& kern = gemm::kernel_for(a.x.dtype);
    w_group = (gemm::packed_a_layout(kern, Kg, CRS).bytes + 63) / 64 * 64;
    auto* buf = static_cast<char*>(t_filter.get(static_cast<std::size_t>(G) * w_group));
    const T* w = data_of<T>(a.w);
    for (std::int64_t g = 0; g < G; ++g)
      gemm::pack_a_all(kern, gemm::Mat{w + g * Kg * CRS, a.w.dtype, CRS, 1}, Kg, CRS, buf + g * w_group, threads);
    w_packed = buf;
  }
  // A batch that divides evenly over the threads (or is long enough for the
  // remainder not to matter) runs one image per thread with a single-threaded
  // GEMM: no fork-join inside an image.
  if (threads > 1 && N >= threads && (N % threads == 0 || N >= 4 * threads)) {
    pool().parallel_for(N, 1, [&](std::int64_t n0, std::int64_t n1) {
      for (std::int64_t n = n0; n < n1; ++n) run_image<T>(a, n, 1, w_packed, w_group);
    });
  } else {
    for (std::int64_t n = 0; n < N; ++n) run_image<T>(a, n, threads, w_packed, w_group);
  }
  t_filter.trim(kKeepColBytes);
  add_bias<T>(a);
}

}  // namespace

void conv2d(const rt::Conv2dArgs& a) {
  visit_float_dtype(a.x.dtype, [&](auto tag) { run<typename decltype(tag)::type>(a); });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Conv2d, entry<rt::OpKind::Conv2d, conv2d>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
