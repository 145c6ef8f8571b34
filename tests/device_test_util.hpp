#pragma once
// What the device tests share: why a backend is unavailable (the skip
// reason), seeded random data, and the error code a call throws.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

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

inline std::vector<float> rand_vec(std::size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
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

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace torsh::test
