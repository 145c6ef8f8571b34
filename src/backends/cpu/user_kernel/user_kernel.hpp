#pragma once
// User kernels on the CPU backend: the Torsh dialect compiled by the system
// C++ compiler into a shared object (kernel_build.cpp), loaded from its bytes
// and run on the thread pool (user_kernel.cpp).
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "torsh/backend/backend_impl.hpp"

namespace torsh::cpu::uk {

// The largest work-group (block volume) and block dimension a launch takes:
// every item of a group with barriers needs its own stack (work_group_fibers.hpp).
inline constexpr std::uint32_t kMaxWorkGroup = 1024;

std::string compiler_id();
rt::KernelBinary build_kernel(const rt::UserKernelSpec& spec);
std::unique_ptr<rt::UserKernelImpl> load_kernel(const rt::UserKernelSpec& spec, std::span<const std::uint8_t> bytes);

// Whether the source (comments and literals aside) or a define names BARRIER:
// such kernels run their items as fibers, the others as a plain loop.
bool uses_barriers(const rt::UserKernelSpec& spec);
// The kernel's name in messages: KernelSource::name, else the entry.
std::string kernel_name(const rt::UserKernelSpec& spec);

// The shared object's bytes carry a trailer (magic, length, checksum) that
// load_kernel checks before handing anything to the dynamic loader: a
// truncated or damaged cache entry must throw, not fault.
std::vector<std::uint8_t> seal(std::vector<std::uint8_t> so);
// The shared object inside sealed bytes; throws InvalidArgument saying what is wrong.
std::span<const std::uint8_t> unseal(std::span<const std::uint8_t> bytes, const std::string& kernel);

}  // namespace torsh::cpu::uk
