// Graph capture and replay: recorded ops re-run on new input data give the
// same results as eager execution, on every available backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "device_test_util.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using torsh::test::rand_vec;

namespace {

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
    if (be.supports(rt::OpKind::Reduce, DType::F32)) continue;
    SCOPED_TRACE(be.name());
    auto v = rand_vec(32, 11);
    Tensor x = be.from_host(v.data(), {32}, DType::F32);
    GraphCapture cap(be);
    Tensor y = ops::sum(ops::add(x, x));
    Graph g = cap.end();
    std::vector<float> nv(32, 0.25f);
    x.copy_from_host(nv.data(), nv.size() * sizeof(float));
    g.replay();
    for (float e : y.to_vector()) EXPECT_NEAR(e, 16.0f, 1e-5f);
  }
}

TEST(Graph, CpuReplaysAKernelListAndSaysWhy) {
  Backend cpu = Backend::create(BackendType::Cpu);
  auto v = rand_vec(16, 13);
  Tensor x = cpu.from_host(v.data(), {16}, DType::F32);
  GraphCapture cap(cpu);
  Tensor y = ops::add(x, x);
  Graph g = cap.end();
  EXPECT_EQ(g.replay_mode(), "kernel list");
  EXPECT_NE(g.native_unavailable_reason().find("kernel list"), std::string::npos) << g.native_unavailable_reason();
}

namespace {
bool has_opencl() {
  const auto av = Backend::available();
  return std::find(av.begin(), av.end(), BackendType::OpenCl) != av.end();
}

std::string opencl_reason() {
  for (const auto& st : backend_statuses())
    if (st.type == BackendType::OpenCl) return st.reason;
  return "not a known backend";
}

// Ops OpenCL runs natively: tiled matmul, broadcast (strided) and dense binary
// kernels, a strided copy, and softmax on views at an element offset (one
// 512 bytes in, one 32 bytes in).
std::vector<Tensor> native_chain(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor h = ops::add(ops::matmul(x, w), b);               // [8, 64]
  Tensor t = h.transpose(0, 1).contiguous();               // [64, 8]
  Tensor aligned = ops::softmax(t.slice(0, 16, 64), -1);   // starts 512 bytes in
  Tensor unaligned = ops::softmax(t.slice(0, 1, 64), -1);  // starts 32 bytes in
  return {ops::mul(aligned, aligned), ops::sub(unaligned, t.slice(0, 1, 64))};
}
}  // namespace

TEST(Graph, OpenClReplaysACommandBuffer) {
  if (!has_opencl()) GTEST_SKIP() << "OpenCL backend unavailable: " << opencl_reason();
  Backend be = Backend::create(BackendType::OpenCl);
  auto xv = rand_vec(8 * 16, 21), wv = rand_vec(16 * 64, 22), bv = rand_vec(64, 23);
  Tensor x = be.from_host(xv.data(), {8, 16}, DType::F32);
  Tensor w = be.from_host(wv.data(), {16, 64}, DType::F32);
  Tensor b = be.from_host(bv.data(), {64}, DType::F32);

  ops::reset_fallback_stats();
  GraphCapture cap(be);
  const std::vector<Tensor> out = native_chain(x, w, b);
  Graph g = cap.end();
  ASSERT_EQ(ops::fallback_stats().ops, 0u) << "the chain must run natively on OpenCL";
  EXPECT_EQ(g.replay_mode(), "cl_khr_command_buffer") << g.native_unavailable_reason();
  EXPECT_EQ(g.native_unavailable_reason(), "");

  for (unsigned round = 0; round < 3; ++round) {
    auto nx = rand_vec(8 * 16, 200 + round), nb = rand_vec(64, 300 + round);
    x.copy_from_host(nx.data(), nx.size() * sizeof(float));
    b.copy_from_host(nb.data(), nb.size() * sizeof(float));
    g.replay();
    Tensor fx = be.from_host(nx.data(), {8, 16}, DType::F32), fb = be.from_host(nb.data(), {64}, DType::F32);
    const std::vector<Tensor> eager = native_chain(fx, w, fb);
    for (std::size_t i = 0; i < out.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i) + ", round " + std::to_string(round));
      expect_near(out[i].to_vector(), eager[i].to_vector(), 1e-5f);
    }
  }
}

// A chain ending in row sums, which fall back to the CPU on a device without a
// reduction kernel (the test skips where the device has one).
Tensor fallback_chain(const Tensor& x, const Tensor& w, const Tensor& b) {
  return ops::sum(ops::softmax(ops::add(ops::matmul(x, w), b), -1), {-1}, true);
}

TEST(Graph, OpenClFallbackOpReplaysAsAKernelList) {
  if (!has_opencl()) GTEST_SKIP() << "OpenCL backend unavailable: " << opencl_reason();
  Backend be = Backend::create(BackendType::OpenCl);
  if (be.supports(rt::OpKind::Reduce, DType::F32)) GTEST_SKIP() << "OpenCL runs sum natively; no fallback to capture";
  auto xv = rand_vec(8 * 16, 31), wv = rand_vec(16 * 12, 32), bv = rand_vec(12, 33);
  Tensor x = be.from_host(xv.data(), {8, 16}, DType::F32);
  Tensor w = be.from_host(wv.data(), {16, 12}, DType::F32);
  Tensor b = be.from_host(bv.data(), {12}, DType::F32);

  GraphCapture cap(be);
  Tensor y = fallback_chain(x, w, b);  // sum falls back to the CPU
  Graph g = cap.end();
  EXPECT_EQ(g.replay_mode(), "kernel list");
  const std::string why = g.native_unavailable_reason();
  EXPECT_NE(why.find("sum"), std::string::npos) << why;
  EXPECT_NE(why.find("falls back to the CPU"), std::string::npos) << why;

  for (unsigned round = 0; round < 2; ++round) {
    auto nx = rand_vec(8 * 16, 400 + round);
    x.copy_from_host(nx.data(), nx.size() * sizeof(float));
    g.replay();
    Tensor fresh = be.from_host(nx.data(), {8, 16}, DType::F32);
    expect_near(y.to_vector(), fallback_chain(fresh, w, b).to_vector(), 1e-5f);
  }
}

TEST(Graph, OpenClNativeReplaysManyTimesAndOutlivesItsTemporaries) {
  if (!has_opencl()) GTEST_SKIP() << "OpenCL backend unavailable: " << opencl_reason();
  Backend be = Backend::create(BackendType::OpenCl);
  auto v = rand_vec(1000, 41);
  Tensor x = be.from_host(v.data(), {1000}, DType::F32);
  Tensor acc = be.from_host(std::vector<float>(1000, 0.0f).data(), {1000}, DType::F32);
  Tensor out;
  GraphCapture cap(be);
  {
    // Temporaries dropped inside the capture: the command buffer still uses their memory.
    Tensor t = ops::mul(x, x);
    Tensor u = ops::softmax(t.slice(0, 3, 1000), 0);
    out = ops::add(acc.slice(0, 3, 1000), u);
  }
  Graph g = cap.end();
  ASSERT_EQ(g.replay_mode(), "cl_khr_command_buffer") << g.native_unavailable_reason();
  std::vector<float> ones(1000, 1.0f);
  x.copy_from_host(ones.data(), ones.size() * sizeof(float));
  for (int i = 0; i < 20; ++i) g.replay();
  for (float e : out.to_vector()) ASSERT_NEAR(e, 1.0f / 997.0f, 1e-7f);
}
