#include "fiber_context.hpp"

#include <cstdint>

namespace torsh::cpu::uk {

#if defined(__x86_64__) && !defined(TORSH_FIBER_UCONTEXT)

extern "C" void torsh_cpu_fiber_swap(void** save_sp, void* load_sp);
extern "C" void torsh_cpu_fiber_start();

// swap: push the System V callee-saved registers and MXCSR / x87 control word,
// store the stack pointer, load the other one, pop the same. start: the first
// `ret` into a new fiber lands here with entry in r13 and its argument in r12;
// the CFI marks it as the outermost frame so unwinders stop.
asm(R"(
  .text
  .p2align 4
  .globl torsh_cpu_fiber_swap
  .hidden torsh_cpu_fiber_swap
  .type torsh_cpu_fiber_swap, @function
torsh_cpu_fiber_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size torsh_cpu_fiber_swap, .-torsh_cpu_fiber_swap

  .p2align 4
  .globl torsh_cpu_fiber_start
  .hidden torsh_cpu_fiber_start
  .type torsh_cpu_fiber_start, @function
torsh_cpu_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size torsh_cpu_fiber_start, .-torsh_cpu_fiber_start
)");

void fiber_init(FiberContext& c, char* stack_lo, std::size_t size, void (*entry)(void*), void* arg) {
  // Top of stack, 16-aligned: `ret` pops start's address from top-8 and
  // leaves rsp at top, so start's `call` enters `entry` with the ABI's alignment.
  auto top = (reinterpret_cast<std::uintptr_t>(stack_lo) + size) & ~std::uintptr_t{15};
  auto* slot = reinterpret_cast<std::uint64_t*>(top);
  slot[-1] = reinterpret_cast<std::uint64_t>(&torsh_cpu_fiber_start);
  slot[-2] = 0;                                       // rbp
  slot[-3] = 0;                                       // rbx
  slot[-4] = reinterpret_cast<std::uint64_t>(arg);    // r12
  slot[-5] = reinterpret_cast<std::uint64_t>(entry);  // r13
  slot[-6] = 0;                                       // r14
  slot[-7] = 0;                                       // r15
  std::uint32_t mxcsr;
  std::uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  auto* words = reinterpret_cast<unsigned char*>(&slot[-8]);
  __builtin_memcpy(words, &mxcsr, 4);
  __builtin_memcpy(words + 4, &fpucw, 2);
  c.sp = &slot[-8];
}

void fiber_switch(FiberContext& from, FiberContext& to) { torsh_cpu_fiber_swap(&from.sp, to.sp); }

#else

namespace {
// makecontext passes int arguments only: the entry and its argument travel
// through the thread making the switch (the first switch to a fiber runs start()).
thread_local void (*t_entry)(void*) = nullptr;
thread_local void* t_arg = nullptr;
void start() { t_entry(t_arg); }
}  // namespace

void fiber_init(FiberContext& c, char* stack_lo, std::size_t size, void (*entry)(void*), void* arg) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack_lo;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  c.entry = entry;
  c.arg = arg;
  makecontext(&c.uc, start, 0);
}

void fiber_switch(FiberContext& from, FiberContext& to) {
  t_entry = to.entry;
  t_arg = to.arg;
  swapcontext(&from.uc, &to.uc);
}

#endif

}  // namespace torsh::cpu::uk
