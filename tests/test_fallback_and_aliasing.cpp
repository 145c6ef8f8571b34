// Ops a device cannot run fall back to the CPU without ever needing the op
// they fall back from; copies between overlapping views behave as if through
// a temporary; broadcast views are read-only.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "torsh/backend/backend_impl.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

bool opencl_available() {
  const auto av = Backend::available();
  return std::find(av.begin(), av.end(), BackendType::OpenCl) != av.end();
}

std::vector<double> iota(std::size_t n, double start = 0) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

std::vector<double> as_f64(const Tensor& t) {
  std::vector<float> f = t.to_vector();
  return {f.begin(), f.end()};
}

// Every case here used to recurse copy -> fallback -> to() -> contiguous() -> copy until the stack overflowed.
TEST(Fallback, StridedAndBroadcastViewsOfDTypesTheDeviceCannotCopy) {
  if (!opencl_available()) GTEST_SKIP() << "OpenCL backend unavailable";
  Backend cl = Backend::create(BackendType::OpenCl);
  const double one = 1.0;
  // zeros(3, f64) + 1.0: the scalar is a broadcast view.
  Tensor z = cl.zeros(Shape{3}, DType::F64);
  Tensor s = cl.from_host(&one, Shape{1}, DType::F64).broadcast_to(Shape{3});
  EXPECT_EQ(as_f64(ops::add(z, s)), (std::vector<double>{1, 1, 1}));
  // A reduction of the broadcast view: made contiguous and reduced on the
  // device where it has doubles, else staged for the CPU.
  ops::reset_fallback_stats();
  EXPECT_EQ(as_f64(ops::sum(s)), (std::vector<double>{3}));
  EXPECT_EQ(ops::fallback_stats().ops > 0, !cl.impl().capabilities().f64);
  // A broadcast view made contiguous (what full() does).
  EXPECT_EQ(as_f64(s.contiguous()), (std::vector<double>{1, 1, 1}));
  // f16 (2, 3).T.contiguous()
  const std::vector<double> v = iota(6);
  Tensor h = cl.from_host(v.data(), Shape{2, 3}, DType::F64).cast(DType::F16);
  EXPECT_EQ(as_f64(h.transpose(0, 1).contiguous()), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // f64 (2, 3) + (3): broadcasting along rows.
  Tensor a = cl.from_host(v.data(), Shape{2, 3}, DType::F64);
  Tensor b = cl.from_host(v.data(), Shape{3}, DType::F64);
  EXPECT_EQ(as_f64(ops::add(a, b)), (std::vector<double>{0, 2, 4, 3, 5, 7}));
  // A strided output of a fallback op: only the view's elements change.
  Tensor wide = cl.zeros(Shape{2, 6}, DType::F64);
  Tensor every_other = wide.slice(1, 0, 6, 2);
  ops::binary_out(rt::BinaryOp::Add, a, a, every_other);
  EXPECT_EQ(as_f64(wide), (std::vector<double>{0, 0, 2, 0, 4, 0, 6, 0, 8, 0, 10, 0}));
}

// Two outputs interleaved in one buffer: writing one back must not undo the other.
TEST(Fallback, InterleavedOutputsKeepEachOthersWrites) {
  if (!opencl_available()) GTEST_SKIP() << "OpenCL backend unavailable";
  Backend cl = Backend::create(BackendType::OpenCl);
  Tensor both = cl.zeros(Shape{8}, DType::F64);
  Tensor even = both.slice(0, 0, 8, 2), odd = both.slice(0, 1, 8, 2);
  const std::vector<double> v = iota(4, 1);
  Tensor x = cl.from_host(v.data(), Shape{4}, DType::F64);
  ops::binary_out(rt::BinaryOp::Add, x, x, even);
  ops::binary_out(rt::BinaryOp::Mul, x, x, odd);
  EXPECT_EQ(as_f64(both), (std::vector<double>{2, 1, 4, 4, 6, 9, 8, 16}));
}

TEST(Aliasing, CopyFromAnOverlappingViewIsAsIfThroughATemporary) {
  Backend cpu = Backend::create(BackendType::Cpu);
  const std::vector<double> v = iota(9);
  // x.copy_(x.T)
  Tensor x = cpu.from_host(v.data(), Shape{3, 3}, DType::F64);
  x.copy_(x.transpose(0, 1));
  EXPECT_EQ(as_f64(x), (std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8}));
  // x[1:] = x[:-1]: the source is overwritten ahead of the copy.
  Tensor y = cpu.from_host(v.data(), Shape{9}, DType::F64);
  Tensor tail = y.slice(0, 1, 9);
  tail.copy_(y.slice(0, 0, 8));
  EXPECT_EQ(as_f64(y), (std::vector<double>{0, 0, 1, 2, 3, 4, 5, 6, 7}));
  // ... and the other direction, with a cast in between views of one buffer.
  Tensor w = cpu.from_host(v.data(), Shape{9}, DType::F64);
  Tensor head = w.slice(0, 0, 8);
  head.copy_(w.slice(0, 1, 9));
  EXPECT_EQ(as_f64(w), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 8}));
  // A view copied onto itself is left as it is.
  Tensor u = cpu.from_host(v.data(), Shape{9}, DType::F64);
  u.copy_(u);
  EXPECT_EQ(as_f64(u), v);
}

TEST(Aliasing, BroadcastViewsAreReadOnly) {
  Backend cpu = Backend::create(BackendType::Cpu);
  Tensor x = cpu.zeros(Shape{1}, DType::F32);
  Tensor y = x.broadcast_to(Shape{1000000});
  Tensor one = cpu.zeros(Shape{1000000}, DType::F32);
  try {
    ops::binary_(rt::BinaryOp::Add, y, one);
    FAIL() << "writing through a broadcast view must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("broadcast view"), std::string::npos) << e.what();
  }
  EXPECT_EQ(x.to_vector(), std::vector<float>{0});
  EXPECT_THROW(y.copy_(one), Error);
  EXPECT_THROW(ops::unary_out(rt::UnaryOp::Relu, y, y), Error);
  // Reading through one stays fine, and a dimension of size 1 with stride 0 is not a broadcast.
  EXPECT_EQ(ops::add(y, one).numel(), 1000000);
  Tensor z = cpu.zeros(Shape{4}, DType::F32).unsqueeze(0);
  ops::binary_(rt::BinaryOp::Add, z, z);
}

}  // namespace
