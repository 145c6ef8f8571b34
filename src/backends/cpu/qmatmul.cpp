// Linear layers on block-quantized weights: integer dot products against
// activations quantized per block on the fly (quant/qmatmul_kernels.hpp).
#include "device.hpp"
#include "quant/qmatmul_kernels.hpp"

namespace torsh::cpu {

void qmatmul(const rt::QMatmulArgs& a) { quant::qmatmul(a); }

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QMatmul, entry<rt::OpKind::QMatmul, qmatmul>>(rt::DTypes{DType::F32});
});
}  // namespace

}  // namespace torsh::cpu
