// Block-quantized weights (quant.kern.h): qmatmul_f32, one QM_GROUP work-group
// per weight row and QM_ROWS activation rows, and dequantize_f32/_b16 for whole
// matrices and embedding lookups. The kernels take no element offsets, so every
// operand goes through ElementView.
#include <optional>

#include "launch.hpp"

namespace torsh::opencl {
namespace {

void qmatmul(OpenClStream& s, const rt::QMatmulArgs& a) {
  if (a.m == 0 || a.n == 0) return;
  ElementView x(s, a.x, static_cast<std::size_t>(a.m * a.k) * sizeof(float), false);
  ElementView w(s, a.w, static_cast<std::size_t>(a.w.numel()), false);
  ElementView y(s, a.out, static_cast<std::size_t>(a.m * a.n) * sizeof(float), true);
  const auto groups = static_cast<std::size_t>(gpu::qmatmul_groups(a));
  launch(s, s.device().kernel("qmatmul_f32"), range(groups * QM_GROUP), range(QM_GROUP), x.mem(), w.mem(), y.mem(),
         cl_long{a.m}, cl_long{a.n}, cl_long{a.k}, cl_int{gpu::quant_code(a.format)});
  y.commit();
}

void dequantize(OpenClStream& s, const rt::DequantizeArgs& a) {
  const std::int64_t total = a.m * a.cols;
  if (total == 0) return;
  const DType t = a.out.dtype;
  ElementView w(s, a.w, static_cast<std::size_t>(a.w.numel()), false);
  ElementView y(s, a.out, static_cast<std::size_t>(total) * dtype_size(t), true);
  std::optional<ElementView> ids;
  if (a.ids.present()) ids.emplace(s, a.ids, static_cast<std::size_t>(a.m) * dtype_size(a.ids.dtype), false);
  const cl_mem id_mem = ids ? ids->mem() : nullptr;  // a NULL buffer argument: the kernel never reads it
  const cl_int fmt = gpu::quant_code(a.format), width = gpu::ids_width(a);
  if (t == DType::F32) {
    const Kernel k = s.device().kernel("dequantize_f32");
    const auto [global, local] = grid_1d(s.device(), k, total);
    launch(s, k, global, local, w.mem(), id_mem, y.mem(), fmt, width, cl_long{a.cols}, cl_long{total});
  } else {
    const Kernel k = s.device().kernel("dequantize_b16");
    const auto [global, local] = grid_1d(s.device(), k, total);
    launch(s, k, global, local, w.mem(), id_mem, y.mem(), fmt, width, cl_long{a.cols}, cl_long{total},
           cl_int{t == DType::BF16 ? 1 : 0});
  }
  y.commit();
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QMatmul, entry<rt::OpKind::QMatmul, qmatmul>>(gpu::kF32);
  t.add<rt::OpKind::Dequantize, entry<rt::OpKind::Dequantize, dequantize>>(gpu::kDequantizeDTypes);
});

}  // namespace
}  // namespace torsh::opencl
