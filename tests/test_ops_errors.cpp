// Bad input for every op: a torsh::Error with the expected code, a message and
// context naming the op, and nothing written to any output or in-place operand.
#include <gtest/gtest.h>

#include <string>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
Backend cpu() { return Backend::create(BackendType::Cpu); }

Tensor full(const Shape& s, float v, DType dt = DType::F32) {
  std::vector<float> h(static_cast<std::size_t>(s.numel()), v);
  return cpu().from_host(h.data(), s, DType::F32).cast(dt);
}

// Runs f, expects an Error of `code` whose context names `op`.
template <class F>
void expect_error(ErrorCode code, const std::string& op, F&& f) {
  try {
    f();
    ADD_FAILURE() << op << ": expected " << error_code_name(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.context().op, op) << e.what();
    EXPECT_FALSE(e.suggestions().empty()) << e.what();
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
  }
}

std::optional<Backend> other_device() {
  for (auto t : Backend::available())
    if (t != BackendType::Cpu) return Backend::create(t);
  return std::nullopt;
}
}  // namespace

TEST(OpErrors, Binary) {
  Tensor a = full({2, 3}, 1), b = full({4}, 2), out = full({2, 3}, 7);
  expect_error(ErrorCode::ShapeMismatch, "add", [&] { ops::add(a, b); });
  expect_error(ErrorCode::DTypeMismatch, "mul", [&] { ops::mul(a, full({2, 3}, 1, DType::F16)); });
  Tensor wrong_out = full({3, 2}, 7);
  expect_error(ErrorCode::ShapeMismatch, "sub", [&] { ops::binary_out(rt::BinaryOp::Sub, a, a, wrong_out); });
  EXPECT_EQ(wrong_out.to_vector(), std::vector<float>(6, 7.0f));
  // An output overlapping an input without being the same view would read what it wrote.
  Tensor big = full({4, 4}, 1);
  Tensor shifted = big.slice(0, 1, 4), head = big.slice(0, 0, 3);
  expect_error(ErrorCode::InvalidArgument, "add", [&] { ops::binary_out(rt::BinaryOp::Add, head, head, shifted); });
  EXPECT_EQ(big.to_vector(), std::vector<float>(16, 1.0f));
  Tensor bools = full({2}, 1, DType::Bool);
  expect_error(ErrorCode::DTypeMismatch, "add", [&] { ops::add(bools, bools); });
  (void)out;
}

TEST(OpErrors, OperandsOnDifferentDevices) {
  auto other = other_device();
  if (!other) GTEST_SKIP() << "only the CPU backend is available";
  Tensor a = full({4}, 1);
  std::vector<float> h(4, 1.0f);
  Tensor b = other->from_host(h.data(), {4}, DType::F32);
  expect_error(ErrorCode::DeviceMismatch, "add", [&] { ops::add(a, b); });
  expect_error(ErrorCode::DeviceMismatch, "matmul", [&] { ops::matmul(a.reshape({2, 2}), b.reshape({2, 2})); });
}

TEST(OpErrors, Unary) {
  Tensor x = full({3}, 1), out = full({4}, 5);
  expect_error(ErrorCode::ShapeMismatch, "exp", [&] { ops::unary_out(rt::UnaryOp::Exp, x, out); });
  EXPECT_EQ(out.to_vector(), std::vector<float>(4, 5.0f));
  Tensor i32 = full({3}, 1, DType::I32);
  expect_error(ErrorCode::DTypeMismatch, "exp", [&] { ops::exp(i32); });
}

TEST(OpErrors, MatmulAndGemm) {
  Tensor a = full({2, 3}, 1), b = full({4, 5}, 1);
  expect_error(ErrorCode::ShapeMismatch, "matmul", [&] { ops::matmul(a, b); });
  expect_error(ErrorCode::DTypeMismatch, "matmul", [&] { ops::matmul(a, full({3, 2}, 1, DType::F16)); });
  Tensor c = full({3, 3}, 9);
  expect_error(ErrorCode::ShapeMismatch, "gemm", [&] { ops::gemm(a, full({3, 2}, 1), 1.0f, 1.0f, c); });
  EXPECT_EQ(c.to_vector(), std::vector<float>(9, 9.0f));
  expect_error(ErrorCode::InvalidArgument, "gemm", [&] { ops::gemm(a, full({3, 2}, 1), 1.0f, 0.5f); });
}

TEST(OpErrors, SoftmaxAndReductions) {
  Tensor x = full({2, 3}, 1);
  expect_error(ErrorCode::OutOfRange, "softmax", [&] { ops::softmax(x, 2); });
  expect_error(ErrorCode::OutOfRange, "log_softmax", [&] { ops::log_softmax(x, -3); });
  expect_error(ErrorCode::OutOfRange, "sum", [&] { ops::sum(x, {5}); });
  expect_error(ErrorCode::InvalidArgument, "mean", [&] { ops::mean(x, {0, 0}); });
  expect_error(ErrorCode::OutOfRange, "argmax", [&] { ops::argmax(x, 2); });
  expect_error(ErrorCode::DTypeMismatch, "softmax", [&] { ops::softmax(full({3}, 1, DType::I32)); });
}

TEST(OpErrors, Norms) {
  Tensor x = full({2, 4}, 1);
  expect_error(ErrorCode::ShapeMismatch, "layer_norm", [&] { ops::layer_norm(x, full({3}, 1)); });
  expect_error(ErrorCode::ShapeMismatch, "rms_norm", [&] { ops::rms_norm(x, full({5}, 1)); });
  Tensor rm = full({4}, 0), rv = full({4}, 1);
  Tensor x4 = full({2, 3, 2, 2}, 1);
  expect_error(ErrorCode::ShapeMismatch, "batch_norm",
               [&] { ops::batch_norm(x4, rm, rv, std::nullopt, std::nullopt, true); });
  EXPECT_EQ(rm.to_vector(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(rv.to_vector(), std::vector<float>(4, 1.0f));
  expect_error(ErrorCode::ShapeMismatch, "batch_norm",
               [&] { ops::batch_norm(full({3}, 1), std::nullopt, std::nullopt); });
}

TEST(OpErrors, RopeAndAttention) {
  Backend b = cpu();
  auto [cos, sin] = ops::rope_cache(b, 16, 8);
  Tensor x = full({1, 4, 2, 8}, 1);
  expect_error(ErrorCode::OutOfRange, "rope", [&] { ops::rope(x, cos, sin, ops::RopeStyle::NeoX, 14); });
  expect_error(ErrorCode::InvalidArgument, "rope", [&] { ops::rope(x, cos, sin, ops::RopeStyle::NeoX, 0, 3); });
  Tensor q = full({1, 4, 8, 16}, 1), k = full({1, 3, 8, 16}, 1), v = full({1, 3, 8, 16}, 1);
  expect_error(ErrorCode::ShapeMismatch, "attention", [&] { ops::attention(q, k, v); });  // 4 heads over 3 kv heads
  Tensor k2 = full({1, 2, 8, 8}, 1);
  expect_error(ErrorCode::ShapeMismatch, "attention", [&] { ops::attention(q, k2, k2); });
  expect_error(ErrorCode::ShapeMismatch, "matmul_vec", [&] { ops::matmul_vec(full({3, 4}, 1), full({5}, 1)); });
}

TEST(OpErrors, IndexSelectAndEmbedding) {
  Backend b = cpu();
  Tensor x = full({3, 5}, 1);
  const std::int64_t good[] = {0, 4, 2}, bad[] = {0, 5, 1};
  Tensor ids = b.from_host(good, {3}, DType::I64), bad_ids = b.from_host(bad, {3}, DType::I64);
  try {
    ops::index_select(x, 1, bad_ids);
    ADD_FAILURE() << "an id past the axis was taken";
  } catch (const Error& e) {
    // The id, its position and the bound.
    EXPECT_EQ(e.code(), ErrorCode::OutOfRange);
    const std::string m = e.what();
    EXPECT_NE(m.find("id 5 at position 1"), std::string::npos) << m;
    EXPECT_NE(m.find("[0, 5)"), std::string::npos) << m;
  }
  const std::int32_t negative[] = {-1};
  expect_error(ErrorCode::OutOfRange, "index_select",
               [&] { ops::index_select(x, 0, b.from_host(negative, {1}, DType::I32)); });
  expect_error(ErrorCode::OutOfRange, "index_select", [&] { ops::index_select(x, 2, ids); });
  expect_error(ErrorCode::OutOfRange, "index_select", [&] { ops::index_select(x, -3, ids); });
  expect_error(ErrorCode::OutOfRange, "index_select", [&] { ops::index_select(full({}, 1), 0, ids); });
  expect_error(ErrorCode::DTypeMismatch, "index_select", [&] { ops::index_select(x, 1, full({3}, 1)); });
  expect_error(ErrorCode::ShapeMismatch, "embedding", [&] { ops::embedding(full({2, 3, 4}, 1), ids); });
  expect_error(ErrorCode::OutOfRange, "embedding", [&] { ops::embedding(x, ids); });
  if (auto other = other_device())
    expect_error(ErrorCode::DeviceMismatch, "index_select", [&] { ops::index_select(x, 1, ids.to(*other)); });
}

TEST(OpErrors, ConvAndPool) {
  Tensor x = full({1, 4, 5, 5}, 1);
  expect_error(ErrorCode::ShapeMismatch, "conv2d", [&] { ops::conv2d(x, full({2, 3, 3, 3}, 1)); });
  ops::Conv2dParams p;
  p.groups = 3;
  expect_error(ErrorCode::ShapeMismatch, "conv2d", [&] { ops::conv2d(x, full({3, 1, 3, 3}, 1), std::nullopt, p); });
  p = {};
  p.stride_h = 0;
  expect_error(ErrorCode::InvalidArgument, "conv2d", [&] { ops::conv2d(x, full({2, 4, 3, 3}, 1), std::nullopt, p); });
  expect_error(ErrorCode::ShapeMismatch, "conv2d", [&] { ops::conv2d(x, full({2, 4, 7, 7}, 1)); });
  ops::Pool2dParams pp;
  pp.kernel_h = pp.kernel_w = 9;
  expect_error(ErrorCode::ShapeMismatch, "max_pool2d", [&] { ops::max_pool2d(x, pp); });
  pp = {};
  pp.pad_h = 3;
  expect_error(ErrorCode::InvalidArgument, "avg_pool2d", [&] { ops::avg_pool2d(x, pp); });
}

TEST(OpErrors, AdamLeavesEveryParameterUntouched) {
  std::vector<Tensor> params{full({4}, 1), full({3}, 2)}, m{full({4}, 0), full({3}, 0)}, v{full({4}, 0), full({3}, 0)};
  // The second gradient has the wrong shape: the first parameter must not be updated either.
  std::vector<Tensor> grads{full({4}, 0.5f), full({2}, 0.5f)};
  expect_error(ErrorCode::ShapeMismatch, "adam_step", [&] { ops::adam_step(params, grads, m, v, {}, 1); });
  EXPECT_EQ(params[0].to_vector(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(m[0].to_vector(), std::vector<float>(4, 0.0f));
  std::vector<Tensor> short_grads{full({4}, 0.5f)};
  expect_error(ErrorCode::InvalidArgument, "adam_step", [&] { ops::adam_step(params, short_grads, m, v, {}, 1); });
  expect_error(ErrorCode::InvalidArgument, "adam_step", [&] {
    ops::adam_step(params, {full({4}, 1), full({3}, 1)}, m, v, {}, 0);
  });
}

TEST(OpErrors, RandomAndCast) {
  Backend b = cpu();
  expect_error(ErrorCode::InvalidArgument, "rand", [&] { ops::rand(b, {4}, 1, DType::F32, 1.0f, 0.0f); });
  expect_error(ErrorCode::InvalidArgument, "randn", [&] { ops::randn(b, {4}, 1, DType::F32, 0.0f, -1.0f); });
  expect_error(ErrorCode::InvalidArgument, "bernoulli", [&] { ops::bernoulli(b, {4}, 1.5f, 1); });
  expect_error(ErrorCode::DTypeMismatch, "rand", [&] { ops::rand(b, {4}, 1, DType::I32); });
  Tensor out = full({3}, 4);
  expect_error(ErrorCode::ShapeMismatch, "copy", [&] { ops::copy_into(full({4}, 1), out); });
  EXPECT_EQ(out.to_vector(), std::vector<float>(3, 4.0f));
}

TEST(OpErrors, FreedOperand) {
  Tensor a = full({4}, 1), b = full({4}, 2);
  Buffer buf = b.buffer();
  buf.free();
  try {
    ops::add(a, b);
    ADD_FAILURE() << "use of a freed operand must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidState);
  }
}
