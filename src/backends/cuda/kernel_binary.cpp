#include "kernel_binary.hpp"

#include <cctype>
#include <cstring>
#include <string_view>

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

namespace {
// ".u64" -> 8, ".f32" -> 4, ".b8" -> 1; 0 for anything else.
std::size_t ptx_type_size(std::string_view t) {
  if (t.size() < 3 || t[0] != '.' || std::string_view("usbf").find(t[1]) == std::string_view::npos) return 0;
  const std::string_view bits = t.substr(2);
  if (bits == "8") return 1;
  if (bits == "16") return 2;
  if (bits == "32") return 4;
  if (bits == "64") return 8;
  return 0;
}
}  // namespace

std::optional<std::vector<std::size_t>> ptx_param_sizes(std::span<const std::uint8_t> ptx, const std::string& symbol) {
  const std::string_view text(reinterpret_cast<const char*>(ptx.data()), ptx.size());
  const std::string key = ".entry " + symbol;
  std::size_t at = 0, open = std::string_view::npos;
  while ((at = text.find(key, at)) != std::string_view::npos) {
    std::size_t p = at + key.size();
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p < text.size() && text[p] == '(') {
      open = p;
      break;
    }
    at = p;  // a longer name that starts with this one
  }
  if (open == std::string_view::npos) return std::nullopt;
  const std::size_t close = text.find(')', open);
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::size_t> sizes;
  std::string_view list = text.substr(open + 1, close - open - 1);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view decl = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    // ".param" [".align N"] [".ptr" ...] type name ["[" count "]"]
    std::vector<std::string_view> words;
    for (std::size_t i = 0; i < decl.size();) {
      while (i < decl.size() && std::isspace(static_cast<unsigned char>(decl[i]))) ++i;
      const std::size_t b = i;
      while (i < decl.size() && !std::isspace(static_cast<unsigned char>(decl[i]))) ++i;
      if (i > b) words.push_back(decl.substr(b, i - b));
    }
    if (words.empty() && sizes.empty() && list.empty()) break;  // "()"
    if (words.size() < 3 || words[0] != ".param") return std::nullopt;
    std::size_t size = 0;
    for (std::size_t w = 1; w + 1 < words.size() && size == 0; ++w) size = ptx_type_size(words[w]);
    if (size == 0) return std::nullopt;
    const std::string_view name = words.back();
    if (const std::size_t lb = name.find('['); lb != std::string_view::npos) {
      std::size_t count = 0;
      for (std::size_t i = lb + 1; i < name.size() && name[i] != ']'; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
        count = count * 10 + std::size_t(name[i] - '0');
      }
      size *= count;
    }
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace torsh::cuda
