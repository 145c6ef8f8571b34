#include <elf.h>

#include <cstring>

#include "torsh/core/error.hpp"
#include "user_kernel.hpp"

namespace torsh::cpu::uk {

namespace {

constexpr char kMagic[8] = {'T', 'O', 'R', 'S', 'H', 'C', 'P', 'U'};
constexpr std::size_t kTrailer = 24;  // magic, u64 length, u64 FNV-1a of the shared object

std::uint64_t fnv1a(std::span<const std::uint8_t> b) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint8_t c : b) h = (h ^ c) * 1099511628211ull;
  return h;
}

#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
#elif defined(__riscv)
constexpr int kMachine = EM_RISCV;
#elif defined(__powerpc64__)
constexpr int kMachine = EM_PPC64;
#else
constexpr int kMachine = -1;  // not checked
#endif

[[noreturn]] void bad(const std::string& kernel, const std::string& why) {
  throw Error(ErrorCode::InvalidArgument,
              "the binary of kernel '" + kernel + "' is not a CPU kernel of this build: " + why,
              {.op = kernel, .device = "cpu:0"}, {"Rebuild the kernel from its source"});
}

// Enough of the ELF structure that the dynamic loader never maps past the end
// of the bytes (a fault, not an error, once it touches the missing pages).
void check_elf(std::span<const std::uint8_t> so, const std::string& kernel) {
  if (so.size() < sizeof(Elf64_Ehdr) || std::memcmp(so.data(), ELFMAG, SELFMAG) != 0) bad(kernel, "no ELF header");
  Elf64_Ehdr eh;
  std::memcpy(&eh, so.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN) bad(kernel, "not a 64-bit shared object");
  if (kMachine >= 0 && eh.e_machine != kMachine) bad(kernel, "built for another processor architecture");
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > so.size() ||
      eh.e_phnum > (so.size() - eh.e_phoff) / sizeof(Elf64_Phdr))
    bad(kernel, "program headers outside the file");
  if (eh.e_shoff > so.size() ||
      (eh.e_shnum && eh.e_shentsize && eh.e_shnum > (so.size() - eh.e_shoff) / eh.e_shentsize))
    bad(kernel, "section headers outside the file");
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, so.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD && (ph.p_offset > so.size() || ph.p_filesz > so.size() - ph.p_offset))
      bad(kernel, "a loadable segment lies outside the file");
  }
}

}  // namespace

std::vector<std::uint8_t> seal(std::vector<std::uint8_t> so) {
  const std::uint64_t len = so.size(), h = fnv1a(so);
  so.insert(so.end(), kMagic, kMagic + 8);
  const auto* l = reinterpret_cast<const std::uint8_t*>(&len);
  const auto* hh = reinterpret_cast<const std::uint8_t*>(&h);
  so.insert(so.end(), l, l + 8);
  so.insert(so.end(), hh, hh + 8);
  return so;
}

std::span<const std::uint8_t> unseal(std::span<const std::uint8_t> bytes, const std::string& kernel) {
  if (bytes.size() < kTrailer) bad(kernel, std::to_string(bytes.size()) + " bytes is too short");
  const std::uint8_t* t = bytes.data() + bytes.size() - kTrailer;
  if (std::memcmp(t, kMagic, 8) != 0) bad(kernel, "no CPU kernel trailer (truncated, or another backend's binary)");
  std::uint64_t len, h;
  std::memcpy(&len, t + 8, 8);
  std::memcpy(&h, t + 16, 8);
  if (len != bytes.size() - kTrailer) bad(kernel, "length does not match (truncated or padded)");
  auto so = bytes.first(static_cast<std::size_t>(len));
  if (fnv1a(so) != h) bad(kernel, "checksum does not match (damaged)");
  check_elf(so, kernel);
  return so;
}

}  // namespace torsh::cpu::uk
