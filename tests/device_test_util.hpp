#pragma once
// What the device tests share: the devices a parameterised test runs on, why
// a backend is unavailable (the skip reason), seeded random data, and the
// error code a call throws.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "torsh/backend/backend_impl.hpp"
#include "torsh/torsh.hpp"

namespace torsh::test {

// "" when `t` has a usable device, else the registry's reason.
inline std::string unavailable_reason(BackendType t) {
  for (const auto& st : backend_statuses())
    if (st.type == t) return st.available ? std::string() : st.reason;
  return "not a known backend";
}

inline bool backend_available(BackendType t) {
  const auto av = Backend::available();
  return std::find(av.begin(), av.end(), t) != av.end();
}

// One device of one backend for a parameterised test, or a backend without a
// usable device (index -1), whose cases skip with the reason.
struct Target {
  BackendType type = BackendType::Cpu;
  int index = -1;      // -1: the backend has no usable device
  std::string reason;  // why, when index < 0
};

// Every device of every known backend (the CPU's too when with_cpu), and one
// entry per backend that has none, so a run names what it could not test.
inline std::vector<Target> device_targets(bool with_cpu) {
  std::vector<Target> out;
  for (const auto& st : backend_statuses()) {
    if (st.type == BackendType::Cpu && !with_cpu) continue;
    if (!st.available || st.devices.empty()) {
      out.push_back({st.type, -1, st.reason.empty() ? "no device" : st.reason});
      continue;
    }
    for (std::size_t i = 0; i < st.devices.size(); ++i) out.push_back({st.type, static_cast<int>(i), ""});
  }
  return out;
}

// "opencl_0", "cuda_unavailable": the test-name suffix of a target.
inline std::string target_label(const Target& t) {
  std::string s(backend_key(t.type));
  return t.index < 0 ? s + "_unavailable" : s + "_" + std::to_string(t.index);
}

inline void PrintTo(const Target& t, std::ostream* os) { *os << target_label(t); }

inline std::vector<float> rand_vec(std::size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

// A contiguous f32 tensor on the CPU backend.
inline Tensor make(const std::vector<float>& v, const Shape& s) {
  return Backend::create(BackendType::Cpu).from_host(v.data(), s, DType::F32);
}

// The code of the torsh::Error `f` throws (its message into `message`), or Internal when it throws none.
template <class F>
ErrorCode error_code_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.message();
    return e.code();
  }
  return ErrorCode::Internal;
}

// The torsh::Error `f` throws; a test failure (and an Internal error) when it throws none.
template <class F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no torsh::Error was thrown";
  return Error(ErrorCode::Internal, "no error was thrown");
}

// What a C-family GPU backend (OpenCL, CUDA, ROCm) claims through supports():
// copies, casts and binary ops take every dtype the CPU does (f64 on devices
// with doubles; elsewhere those calls fall back), binary never bool.
inline void expect_honest_gpu_capabilities(Backend& dev) {
  for (DType t : kAllDTypes) {
    EXPECT_TRUE(dev.supports(rt::OpKind::Copy, t)) << dtype_name(t);
    EXPECT_TRUE(dev.supports(rt::OpKind::Cast, t)) << dtype_name(t);
    EXPECT_EQ(dev.supports(rt::OpKind::Binary, t), t != DType::Bool) << dtype_name(t);
  }
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    EXPECT_TRUE(dev.supports(rt::OpKind::Matmul, t)) << dtype_name(t);
  EXPECT_EQ(dev.supports(rt::OpKind::Matmul, DType::F64), dev.capabilities().f64);
  EXPECT_FALSE(dev.supports(rt::OpKind::Matmul, DType::I32));
  // Softmax, norm and rope take every floating dtype, attention f32, f16 and
  // bf16; unary and reductions every dtype but bool (integer unary: neg, abs
  // and relu; f64 again where the device has doubles).
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
    for (rt::OpKind k : {rt::OpKind::Softmax, rt::OpKind::Norm, rt::OpKind::Rope})
      EXPECT_TRUE(dev.supports(k, t)) << rt::op_kind_name(k) << " " << dtype_name(t);
  for (DType t : {DType::F32, DType::F16, DType::BF16}) EXPECT_TRUE(dev.supports(rt::OpKind::Attention, t));
  EXPECT_FALSE(dev.supports(rt::OpKind::Attention, DType::F64));
  for (DType t : kAllDTypes) {
    EXPECT_EQ(dev.supports(rt::OpKind::Unary, t), t != DType::Bool) << dtype_name(t);
    EXPECT_EQ(dev.supports(rt::OpKind::Reduce, t), t != DType::Bool) << dtype_name(t);
  }
  // Asked directly anyway, an unsupported op says so instead of computing garbage.
  Tensor x = dev.zeros(Shape{4}, DType::Bool);
  Tensor y = dev.empty(Shape{4}, DType::Bool);
  EXPECT_EQ(error_code_of([&] {
              dev.impl().run(rt::OpKind::Binary, rt::BinaryArgs{rt::BinaryOp::Add, x.arg(), x.arg(), y.arg()},
                             dev.impl().default_stream());
            }),
            ErrorCode::Unsupported);
}

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace torsh::test
