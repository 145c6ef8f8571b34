// Graph capture and replay: recorded ops re-run on new input data give the
// same results as eager execution, on every available backend.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {
std::vector<float> rand_vec(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

std::vector<Backend> backends() {
  std::vector<Backend> out;
  for (auto t : Backend::available()) out.push_back(Backend::create(t));
  return out;
}

// The chain the tests capture: softmax(relu(x @ w + b)) then a scaled copy.
Tensor chain(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor h = ops::relu(ops::add(ops::matmul(x, w), b));
  return ops::softmax(h, -1);
}

void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol) << "element " << i;
}
}  // namespace

TEST(Graph, ReplayOnNewInputsMatchesEager) {
  for (Backend be : backends()) {
    SCOPED_TRACE(be.name());
    auto xv = rand_vec(8 * 16, 1), wv = rand_vec(16 * 12, 2), bv = rand_vec(12, 3);
    Tensor x = be.from_host(xv.data(), {8, 16}, DType::F32);
    Tensor w = be.from_host(wv.data(), {16, 12}, DType::F32);
    Tensor b = be.from_host(bv.data(), {12}, DType::F32);

    GraphCapture cap(be);
    Tensor y = chain(x, w, b);
    Graph g = cap.end();
    EXPECT_EQ(g.size(), 4u);
    EXPECT_EQ(g.op_names(), (std::vector<std::string>{"matmul", "add", "relu", "softmax"}));
    EXPECT_GT(g.planned_bytes(), 0u);
    const auto first = y.to_vector();
    expect_near(first, chain(x, w, b).to_vector(), 1e-6f);  // capture also ran the ops

    for (unsigned round = 0; round < 3; ++round) {
      auto nx = rand_vec(8 * 16, 100 + round);
      x.copy_from_host(nx.data(), nx.size() * sizeof(float));
      g.replay();
      Tensor fresh = be.from_host(nx.data(), {8, 16}, DType::F32);
      expect_near(y.to_vector(), chain(fresh, w, b).to_vector(), 1e-5f);
    }
  }
}

TEST(Graph, ReplayAddsNoAllocations) {
  Backend be = Backend::create(BackendType::Cpu);
  auto v = rand_vec(64, 5);
  Tensor x = be.from_host(v.data(), {64}, DType::F32);
  GraphCapture cap(be);
  Tensor y = x;
  for (int i = 0; i < 50; ++i) y = ops::mul(ops::add(y, x), x);
  Graph g = cap.end();
  ASSERT_EQ(g.size(), 100u);
  const auto before = be.memory_stats().total_allocations;
  g.replay();
  g.replay();
  EXPECT_EQ(be.memory_stats().total_allocations, before);
}

TEST(Graph, TemporariesStayAliveForReplay) {
  Backend be = Backend::create(BackendType::Cpu);
  auto v = rand_vec(6 * 4, 7);
  Tensor x = be.from_host(v.data(), {6, 4}, DType::F32);
  Tensor out;
  GraphCapture cap(be);
  {
    // The transpose's contiguous copy is a temporary the graph must keep.
    Tensor t = x.transpose(0, 1).contiguous();
    out = ops::exp(t);
  }
  Graph g = cap.end();
  std::vector<float> nv(24, 0.5f);
  x.copy_from_host(nv.data(), nv.size() * sizeof(float));
  g.replay();
  for (float e : out.to_vector()) EXPECT_NEAR(e, std::exp(0.5f), 1e-6f);
}

TEST(Graph, MisuseIsAClearError) {
  Backend cpu = Backend::create(BackendType::Cpu);
  {
    GraphCapture cap(cpu);
    EXPECT_THROW(GraphCapture second(cpu), Error);  // captures do not nest
    Graph g = cap.end();
    EXPECT_THROW(cap.end(), Error);
    EXPECT_EQ(g.size(), 0u);
  }
  Graph empty;
  EXPECT_THROW(empty.replay(), Error);
  for (auto t : Backend::available()) {
    if (t == BackendType::Cpu) continue;
    Backend other = Backend::create(t);
    auto v = rand_vec(4, 9);
    Tensor x = other.from_host(v.data(), {4}, DType::F32);
    GraphCapture cap(cpu);
    try {
      ops::add(x, x);
      FAIL() << "an op on another device during a capture must be refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidState);
      EXPECT_NE(std::string(e.what()).find("capture"), std::string::npos);
    }
  }
  // An abandoned capture (no end()) leaves the thread free to capture again.
  { GraphCapture abandoned(cpu); }
  GraphCapture again(cpu);
  again.end();
}

TEST(Graph, OpsFallingBackToTheCpuReplayToo) {
  for (auto t : Backend::available()) {
    if (t == BackendType::Cpu) continue;
    Backend be = Backend::create(t);
    if (be.supports(rt::OpKind::Unary, DType::F32)) continue;
    SCOPED_TRACE(be.name());
    auto v = rand_vec(32, 11);
    Tensor x = be.from_host(v.data(), {32}, DType::F32);
    GraphCapture cap(be);
    Tensor y = ops::tanh(ops::add(x, x));
    Graph g = cap.end();
    std::vector<float> nv(32, 0.25f);
    x.copy_from_host(nv.data(), nv.size() * sizeof(float));
    g.replay();
    for (float e : y.to_vector()) EXPECT_NEAR(e, std::tanh(0.5f), 1e-6f);
  }
}
