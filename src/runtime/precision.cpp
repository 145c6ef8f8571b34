#include "torsh/runtime/precision.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace torsh::precision {
namespace {

std::atomic<bool>& tf32() {
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("TORSH_ALLOW_TF32");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

}  // namespace

void set_allow_tf32(bool allow) { tf32().store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return tf32().load(std::memory_order_relaxed); }

}  // namespace torsh::precision
