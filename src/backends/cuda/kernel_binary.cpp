#include "kernel_binary.hpp"

#include <cstring>

#include "torsh/core/error.hpp"

namespace torsh::cuda {

namespace {

//   magic[8] | u32 symbol bytes | u32 0 | u64 code bytes | u64 FNV-1a of symbol and code
constexpr std::size_t kHeader = 32;

const char* magic(CodeKind kind) { return kind == CodeKind::Ptx ? "TRSHPTX1" : "TRSHHCO1"; }

std::uint64_t fnv1a(std::uint64_t h, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::uint64_t checksum(const std::string& symbol, std::span<const std::uint8_t> code) {
  const std::uint64_t h =
      fnv1a(0xcbf29ce484222325ull, reinterpret_cast<const std::uint8_t*>(symbol.data()), symbol.size());
  return fnv1a(h, code.data(), code.size());
}

}  // namespace

std::vector<std::uint8_t> pack_kernel_binary(CodeKind kind, const std::string& symbol,
                                             std::span<const std::uint8_t> code) {
  std::vector<std::uint8_t> out(kHeader + symbol.size() + code.size());
  const std::uint32_t name_len = static_cast<std::uint32_t>(symbol.size()), zero = 0;
  const std::uint64_t code_len = code.size(), sum = checksum(symbol, code);
  std::memcpy(out.data(), magic(kind), 8);
  std::memcpy(out.data() + 8, &name_len, 4);
  std::memcpy(out.data() + 12, &zero, 4);
  std::memcpy(out.data() + 16, &code_len, 8);
  std::memcpy(out.data() + 24, &sum, 8);
  std::memcpy(out.data() + kHeader, symbol.data(), symbol.size());
  if (!code.empty()) std::memcpy(out.data() + kHeader + symbol.size(), code.data(), code.size());
  return out;
}

KernelImage unpack_kernel_binary(CodeKind kind, std::span<const std::uint8_t> b, const std::string& what,
                                 const std::string& device) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::InvalidArgument,
                 "cannot load " + what + ": its " + std::to_string(b.size()) + " bytes are not a " +
                     (kind == CodeKind::Ptx ? "PTX" : "AMDGPU code object") + " kernel built by this plugin (" + why +
                     ")",
                 {.op = "load_kernel", .device = device}, {"Rebuild the kernel from its source"});
  };
  if (b.size() < kHeader || std::memcmp(b.data(), magic(kind), 8) != 0) throw bad("no header");
  std::uint32_t name_len = 0, reserved = 0;
  std::uint64_t code_len = 0, sum = 0;
  std::memcpy(&name_len, b.data() + 8, 4);
  std::memcpy(&reserved, b.data() + 12, 4);
  std::memcpy(&code_len, b.data() + 16, 8);
  std::memcpy(&sum, b.data() + 24, 8);
  if (reserved != 0) throw bad("unknown format flags");
  if (name_len == 0 || name_len > 4096 || code_len == 0 || code_len > b.size() ||
      kHeader + name_len + code_len != b.size())
    throw bad("sizes do not add up");
  KernelImage img;
  img.symbol.assign(reinterpret_cast<const char*>(b.data() + kHeader), name_len);
  const std::span<const std::uint8_t> code = b.subspan(kHeader + name_len);
  if (checksum(img.symbol, code) != sum) throw bad("checksum mismatch");
  if (kind == CodeKind::Ptx) {
    // One NUL, at the end.
    if (code.back() != 0 || std::memchr(code.data(), 0, code.size() - 1) != nullptr) throw bad("not PTX text");
  } else if (code.size() < 64 || std::memcmp(code.data(), "\x7f" "ELF", 4) != 0) {
    throw bad("not an ELF code object");
  }
  img.code.assign(code.begin(), code.end());
  return img;
}

}  // namespace torsh::cuda
