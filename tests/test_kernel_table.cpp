// The op registry and the kernel tables: names generated from one list, a
// lookup that sees the whole argument set, and a dispatcher that never runs
// what a table refused (it falls back instead of failing).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "torsh/backend/backend_impl.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

// The code of the error f throws; nullopt when it throws none.
std::optional<ErrorCode> error_code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OpRegistry, EveryKindHasAUniqueNameThatParsesBack) {
  std::vector<std::string> names;
  for (rt::OpKind k : rt::kAllOpKinds) {
    const std::string n = rt::op_kind_name(k);
    EXPECT_NE(n, "?");
    names.push_back(n);
    ASSERT_TRUE(rt::op_kind_from_name(n).has_value()) << n;
    EXPECT_EQ(*rt::op_kind_from_name(n), k) << n;
    EXPECT_NE(rt::op_kind_names().find(n), std::string::npos) << n;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_EQ(names.size(), rt::kOpKindCount);
}

TEST(OpRegistry, NamesParseCaseInsensitiveWithOptionalUnderscores) {
  EXPECT_EQ(rt::op_kind_from_name("BatchNorm"), rt::OpKind::BatchNorm);
  EXPECT_EQ(rt::op_kind_from_name("batchnorm"), rt::OpKind::BatchNorm);
  EXPECT_EQ(rt::op_kind_from_name("batch_norm"), rt::OpKind::BatchNorm);
  EXPECT_EQ(rt::op_kind_from_name("MATMUL"), rt::OpKind::Matmul);
  EXPECT_FALSE(rt::op_kind_from_name("matmull").has_value());
  EXPECT_FALSE(rt::op_kind_from_name("").has_value());
}

TEST(OpRegistry, ArgumentTypesAndKeyDTypes) {
  static_assert(std::is_same_v<rt::ArgsOf<rt::OpKind::Cast>, rt::CopyArgs>);
  static_assert(rt::takes<rt::CopyArgs>(rt::OpKind::Copy) && rt::takes<rt::CopyArgs>(rt::OpKind::Cast));
  static_assert(!rt::takes<rt::CopyArgs>(rt::OpKind::Binary));
  rt::CopyArgs c;
  c.src.dtype = DType::F16;
  c.out.dtype = DType::F32;
  // A cast is keyed by its destination dtype.
  EXPECT_EQ(rt::key_dtype(rt::OpKind::Cast, c), DType::F32);
  rt::AttentionArgs a;
  a.q.dtype = DType::BF16;
  EXPECT_EQ(rt::key_dtype(rt::OpKind::Attention, a), DType::BF16);
}

struct NullStream final : rt::StreamImpl {
  void synchronize() override {}
  void record(rt::EventImpl&) override {}
  void wait(rt::EventImpl&) override {}
};

// A device with a table of its own, to drive the lookup directly.
struct TableDevice final : rt::DeviceImpl {
  explicit TableDevice(const rt::KernelTable& t) : rt::DeviceImpl(t) {}
  BackendType type() const override { return BackendType::Cpu; }
  const DeviceInfo& info() const override { return info_; }
  Capabilities capabilities() const override { return {}; }
  PerformanceHints hints() const override { return {}; }
  std::unique_ptr<rt::BufferImpl> allocate(std::size_t) override { return nullptr; }
  std::unique_ptr<rt::StreamImpl> create_stream() override { return nullptr; }
  rt::StreamImpl& default_stream() override { return stream_; }
  std::unique_ptr<rt::EventImpl> create_event() override { return nullptr; }
  void synchronize() override {}
  void write(rt::BufferImpl&, std::size_t, const void*, std::size_t, rt::StreamImpl&, bool) override {}
  void read(rt::BufferImpl&, std::size_t, void*, std::size_t, rt::StreamImpl&, bool) override {}
  void copy(rt::BufferImpl&, std::size_t, rt::BufferImpl&, std::size_t, std::size_t, rt::StreamImpl&) override {}
  void fill(rt::BufferImpl&, std::size_t, std::size_t, const void*, std::size_t, rt::StreamImpl&) override {}
  DeviceInfo info_;
  NullStream stream_;
};

int g_runs = 0;

TEST(KernelTable, LookupSeesTheWholeArgumentSetAndRunAgreesWithSupports) {
  rt::KernelTable t;
  t.add<rt::OpKind::Softmax>(
      rt::DTypes{DType::F32}, [](rt::DeviceImpl&, rt::StreamImpl&, const rt::SoftmaxArgs&) { ++g_runs; },
      [](const rt::DeviceImpl&, const rt::SoftmaxArgs& a) { return a.inner <= 16; }, "inner <= 16");
  TableDevice dev(t);
  NullStream s;
  rt::SoftmaxArgs a;
  a.out.dtype = DType::F32;
  a.inner = 4;
  EXPECT_TRUE(dev.supports(rt::OpKind::Softmax, a));
  EXPECT_TRUE(dev.supports(rt::OpKind::Softmax, DType::F32));
  EXPECT_FALSE(dev.supports(rt::OpKind::Softmax, DType::F16));
  EXPECT_FALSE(dev.supports(rt::OpKind::Matmul, DType::F32));
  g_runs = 0;
  dev.run(rt::OpKind::Softmax, a, s);
  EXPECT_EQ(g_runs, 1);
  // Beyond the predicate: supports() says no, and run() refuses, quoting the limit.
  a.inner = 17;
  EXPECT_FALSE(dev.supports(rt::OpKind::Softmax, a));
  const std::string msg = message_of([&] { dev.run(rt::OpKind::Softmax, a, s); });
  EXPECT_NE(msg.find("inner <= 16"), std::string::npos) << msg;
  EXPECT_EQ(g_runs, 1);
  // A dtype the table lacks.
  a.inner = 4;
  a.out.dtype = DType::F64;
  EXPECT_EQ(error_code_of([&] { dev.run(rt::OpKind::Softmax, a, s); }), ErrorCode::Unsupported);
  // Arguments of another kind's type are an internal error, not a reinterpretation.
  EXPECT_EQ(error_code_of([&] { (void)dev.supports(rt::OpKind::Matmul, a); }), ErrorCode::Internal);
  EXPECT_EQ(t.describe(rt::OpKind::Softmax), "f32 (inner <= 16)");
  EXPECT_EQ(t.describe(rt::OpKind::Matmul), "nothing");
}

TEST(KernelTable, KernelsAreTriedInOrder) {
  rt::KernelTable t;
  static int which = 0;
  t.add<rt::OpKind::Unary>(
      rt::DTypes{DType::F32}, [](rt::DeviceImpl&, rt::StreamImpl&, const rt::UnaryArgs&) { which = 1; },
      [](const rt::DeviceImpl&, const rt::UnaryArgs& a) { return a.op == rt::UnaryOp::Relu; }, "relu");
  t.add<rt::OpKind::Unary>(rt::DTypes::floating(),
                           [](rt::DeviceImpl&, rt::StreamImpl&, const rt::UnaryArgs&) { which = 2; });
  TableDevice dev(t);
  NullStream s;
  rt::UnaryArgs a{rt::UnaryOp::Relu, {}, {}};
  dev.run(rt::OpKind::Unary, a, s);
  EXPECT_EQ(which, 1);
  a.op = rt::UnaryOp::Exp;
  dev.run(rt::OpKind::Unary, a, s);
  EXPECT_EQ(which, 2);
  EXPECT_EQ(t.describe(rt::OpKind::Unary), "f32 (relu); f32, f64, f16, bf16");
}

TEST(KernelTable, CpuBackendTakesEveryKind) {
  Backend cpu = Backend::create(BackendType::Cpu);
  for (rt::OpKind k : rt::kAllOpKinds) EXPECT_TRUE(cpu.supports(k, DType::F32)) << rt::op_kind_name(k);
  EXPECT_FALSE(cpu.supports(rt::OpKind::Binary, DType::Bool));
  EXPECT_TRUE(cpu.supports(rt::OpKind::Copy, DType::Bool));
}

}  // namespace
