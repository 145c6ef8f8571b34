// int8 matrix products (ONNX MatMulInteger / QLinearMatMul): igemm/.
#include "device.hpp"
#include "igemm/igemm.hpp"

namespace torsh::cpu {
namespace {

void integer_matmul(const rt::IntegerMatmulArgs& a) { igemm::integer_matmul(a); }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IntegerMatmul, entry<rt::OpKind::IntegerMatmul, integer_matmul>>(
      rt::DTypes{DType::I32, DType::U8, DType::I8, DType::F32});
});

}  // namespace
}  // namespace torsh::cpu
