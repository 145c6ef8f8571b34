#pragma once
// Minimal stackful coroutines for the work-items of a work-group with
// barriers. On x86-64 a hand-written switch saves the callee-saved registers
// and the FP control words (a few nanoseconds; swapcontext makes a signal-mask
// system call per switch); elsewhere (or with TORSH_FIBER_UCONTEXT defined)
// ucontext does the same job.
#include <cstddef>

#if !defined(__x86_64__) || defined(TORSH_FIBER_UCONTEXT)
#include <ucontext.h>
#endif

namespace torsh::cpu::uk {

struct FiberContext {
#if defined(__x86_64__) && !defined(TORSH_FIBER_UCONTEXT)
  void* sp = nullptr;
#else
  ucontext_t uc;
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
#endif
};

// Prepares `c` to run entry(arg) on the stack [stack_lo, stack_lo + size) at
// the first switch to it. entry must never return (it switches away for good).
void fiber_init(FiberContext& c, char* stack_lo, std::size_t size, void (*entry)(void*), void* arg);
// Saves the running context in `from` and resumes `to`.
void fiber_switch(FiberContext& from, FiberContext& to);

}  // namespace torsh::cpu::uk
