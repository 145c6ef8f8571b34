#pragma once
// Grow-only scratch memory owned by one thread (host_alloc.hpp: 64-byte
// aligned, huge pages from 16 MiB). Pool workers and callers live long, so
// kernels that keep one of these thread_local allocate (and page-fault)
// nothing in the steady state.
#include <cstddef>
#include <cstdlib>
#include <new>

#include "host_alloc.hpp"

namespace torsh::cpu {

class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(p_); }

  // At least `bytes` of uninitialised memory, valid until the next get().
  void* get(std::size_t bytes) {
    if (bytes > cap_) {
      std::free(p_);
      cap_ = (bytes + 4095) / 4096 * 4096;
      p_ = allocate_host(cap_);
      if (!p_) {
        cap_ = 0;
        throw std::bad_alloc();
      }
    }
    return p_;
  }

  // Gives the memory back when it grew past `keep` bytes, so one huge call
  // does not pin its scratch for the life of the thread.
  void trim(std::size_t keep) {
    if (cap_ > keep) {
      std::free(p_);
      p_ = nullptr;
      cap_ = 0;
    }
  }

 private:
  void* p_ = nullptr;
  std::size_t cap_ = 0;
};

}  // namespace torsh::cpu
