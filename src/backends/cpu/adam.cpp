// Fused Adam / AdamW: one pass reads param, grad and both moments once and
// writes them once (memory-bound; the bias corrections are hoisted).
#include <cmath>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "simd/simd.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T>
void run(const rt::AdamArgs& a) {
  T* p = data_of<T>(a.param);
  const T* g = data_of<T>(a.grad);
  float* m = data_of<float>(a.exp_avg);
  float* v = data_of<float>(a.exp_avg_sq);
  const float b1 = a.beta1, b2 = a.beta2;
  const float bc1 = 1.0f - static_cast<float>(std::pow(static_cast<double>(b1), static_cast<double>(a.step)));
  const float bc2 = 1.0f - static_cast<float>(std::pow(static_cast<double>(b2), static_cast<double>(a.step)));
  const float step_size = a.lr / bc1, inv_sqrt_bc2 = 1.0f / std::sqrt(bc2);
  const float decay = a.adamw ? 1.0f - a.lr * a.weight_decay : 1.0f;
  const float l2 = a.adamw ? 0.0f : a.weight_decay;
  pool().parallel_for(a.param.numel(), 1 << 14, [&](std::int64_t b, std::int64_t e) {
    if constexpr (std::is_same_v<T, float>) {
      return simd::adam_f32(p + b, g + b, m + b, v + b, e - b, b1, b2, step_size, inv_sqrt_bc2, a.eps, decay, l2,
                            a.grad_scale);
    }
    for (std::int64_t i = b; i < e; ++i) {
      float pi = to_acc(p[i]);
      const float gi = to_acc(g[i]) * a.grad_scale + l2 * pi;
      const float mi = b1 * m[i] + (1.0f - b1) * gi;
      const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
      m[i] = mi;
      v[i] = vi;
      pi = pi * decay - step_size * mi / (std::sqrt(vi) * inv_sqrt_bc2 + a.eps);
      p[i] = from_acc<T>(pi);
    }
  });
}

}  // namespace

void adam(const rt::AdamArgs& a) {
  visit_float_dtype(a.param.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      throw Error(ErrorCode::Unsupported, "f64 parameters", {.op = "adam_step"});
    } else {
      run<T>(a);
    }
  });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Adam, entry<rt::OpKind::Adam, adam>>(rt::DTypes{DType::F32, DType::F16, DType::BF16});
});
}  // namespace

}  // namespace torsh::cpu
