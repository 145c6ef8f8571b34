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
  } else if (code.size() < 64 || std::memcmp(code.data(),
                                             "\x7f"
                                             "ELF",
                                             4) != 0) {
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

namespace {

// A MessagePack reader for the metadata note: the subset AMDGPU code objects
// use, bounds-checked, and nullopt-returning on anything else.
struct Msg {
  enum class Kind : std::uint8_t { Nil, Bool, Int, Float, Str, Bin, Array, Map } kind = Kind::Nil;
  std::int64_t i = 0;
  std::string_view s;
  std::vector<Msg> items;  // Array: the elements; Map: key, value, key, value...
  const Msg* find(std::string_view key) const {
    for (std::size_t k = 0; kind == Kind::Map && k + 1 < items.size(); k += 2)
      if (items[k].kind == Kind::Str && items[k].s == key) return &items[k + 1];
    return nullptr;
  }
};

class MsgReader {
 public:
  explicit MsgReader(std::string_view b) : b_(b) {}
  bool read(Msg& m, int depth = 0) {
    if (depth > 16 || p_ >= b_.size()) return false;
    const auto c = static_cast<std::uint8_t>(b_[p_++]);
    if (c <= 0x7f) return set_int(m, c);
    if (c >= 0xe0) return set_int(m, static_cast<std::int8_t>(c));
    if ((c & 0xf0) == 0x80) return read_items(m, Msg::Kind::Map, 2 * std::size_t(c & 0x0f), depth);
    if ((c & 0xf0) == 0x90) return read_items(m, Msg::Kind::Array, c & 0x0f, depth);
    if ((c & 0xe0) == 0xa0) return read_bytes(m, Msg::Kind::Str, c & 0x1f);
    std::uint64_t n = 0;
    switch (c) {
      case 0xc0: m.kind = Msg::Kind::Nil; return true;
      case 0xc2:
      case 0xc3:
        m.kind = Msg::Kind::Bool;
        m.i = c == 0xc3;
        return true;
      case 0xc4: return uint(1, n) && read_bytes(m, Msg::Kind::Bin, n);
      case 0xc5: return uint(2, n) && read_bytes(m, Msg::Kind::Bin, n);
      case 0xc6: return uint(4, n) && read_bytes(m, Msg::Kind::Bin, n);
      case 0xca: m.kind = Msg::Kind::Float; return skip(4);
      case 0xcb: m.kind = Msg::Kind::Float; return skip(8);
      case 0xcc: return uint(1, n) && set_int(m, std::int64_t(n));
      case 0xcd: return uint(2, n) && set_int(m, std::int64_t(n));
      case 0xce: return uint(4, n) && set_int(m, std::int64_t(n));
      case 0xcf: return uint(8, n) && set_int(m, std::int64_t(n));
      case 0xd0: return uint(1, n) && set_int(m, std::int8_t(n));
      case 0xd1: return uint(2, n) && set_int(m, std::int16_t(n));
      case 0xd2: return uint(4, n) && set_int(m, std::int32_t(n));
      case 0xd3: return uint(8, n) && set_int(m, std::int64_t(n));
      case 0xd9: return uint(1, n) && read_bytes(m, Msg::Kind::Str, n);
      case 0xda: return uint(2, n) && read_bytes(m, Msg::Kind::Str, n);
      case 0xdb: return uint(4, n) && read_bytes(m, Msg::Kind::Str, n);
      case 0xdc: return uint(2, n) && read_items(m, Msg::Kind::Array, n, depth);
      case 0xdd: return uint(4, n) && read_items(m, Msg::Kind::Array, n, depth);
      case 0xde: return uint(2, n) && read_items(m, Msg::Kind::Map, 2 * n, depth);
      case 0xdf: return uint(4, n) && read_items(m, Msg::Kind::Map, 2 * n, depth);
      default: return false;
    }
  }

 private:
  static bool set_int(Msg& m, std::int64_t v) {
    m.kind = Msg::Kind::Int;
    m.i = v;
    return true;
  }
  bool skip(std::size_t n) {
    if (n > b_.size() - p_) return false;
    p_ += n;
    return true;
  }
  bool uint(std::size_t bytes, std::uint64_t& v) {  // big-endian
    if (bytes > b_.size() - p_) return false;
    v = 0;
    for (std::size_t k = 0; k < bytes; ++k) v = (v << 8) | static_cast<std::uint8_t>(b_[p_++]);
    return true;
  }
  bool read_bytes(Msg& m, Msg::Kind kind, std::uint64_t n) {
    if (n > b_.size() - p_) return false;
    m.kind = kind;
    m.s = b_.substr(p_, n);
    p_ += n;
    return true;
  }
  bool read_items(Msg& m, Msg::Kind kind, std::uint64_t n, int depth) {
    if (n > b_.size() - p_) return false;  // every item takes at least a byte
    m.kind = kind;
    m.items.resize(n);
    for (Msg& item : m.items)
      if (!read(item, depth + 1)) return false;
    return true;
  }
  std::string_view b_;
  std::size_t p_ = 0;
};

template <class T>
bool load(std::span<const std::uint8_t> b, std::uint64_t at, T& v) {
  if (at > b.size() || sizeof(T) > b.size() - at) return false;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return true;
}

// The desc of the first note named "AMDGPU" of type NT_AMDGPU_METADATA (32) in a little-endian ELF64.
std::optional<std::string_view> amdgpu_metadata(std::span<const std::uint8_t> elf) {
  if (elf.size() < 64 ||
      std::memcmp(elf.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      elf[4] != 2 || elf[5] != 1)
    return std::nullopt;
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0;
  if (!load(elf, 0x28, shoff) || !load(elf, 0x3a, shentsize) || !load(elf, 0x3c, shnum) || shentsize < 64)
    return std::nullopt;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t sh = shoff + std::uint64_t(i) * shentsize;
    std::uint32_t type = 0;
    std::uint64_t off = 0, size = 0;
    if (!load(elf, sh + 4, type) || !load(elf, sh + 0x18, off) || !load(elf, sh + 0x20, size)) return std::nullopt;
    if (type != 7 || off > elf.size() || size > elf.size() - off) continue;  // SHT_NOTE, inside the file
    for (std::uint64_t n = off; n + 12 <= off + size;) {
      std::uint32_t namesz = 0, descsz = 0, ntype = 0;
      load(elf, n, namesz);
      load(elf, n + 4, descsz);
      load(elf, n + 8, ntype);
      const std::uint64_t name = n + 12, desc = name + ((std::uint64_t(namesz) + 3) & ~3ull);
      const std::uint64_t next = desc + ((std::uint64_t(descsz) + 3) & ~3ull);
      if (next > off + size) break;
      if (ntype == 32 && namesz == 7 && std::memcmp(elf.data() + name, "AMDGPU", 7) == 0)
        return std::string_view(reinterpret_cast<const char*>(elf.data() + desc), descsz);
      n = next;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<std::size_t>> amdgpu_param_sizes(std::span<const std::uint8_t> elf,
                                                           const std::string& symbol) {
  const std::optional<std::string_view> note = amdgpu_metadata(elf);
  if (!note) return std::nullopt;
  Msg root;
  if (!MsgReader(*note).read(root)) return std::nullopt;
  const Msg* kernels = root.find("amdhsa.kernels");
  if (!kernels || kernels->kind != Msg::Kind::Array) return std::nullopt;
  for (const Msg& k : kernels->items) {
    const Msg* name = k.find(".name");
    if (!name || name->kind != Msg::Kind::Str || name->s != symbol) continue;
    std::vector<std::size_t> sizes;
    const Msg* args = k.find(".args");
    if (!args) return sizes;  // no parameters
    if (args->kind != Msg::Kind::Array) return std::nullopt;
    for (const Msg& a : args->items) {
      const Msg* size = a.find(".size");
      const Msg* kind = a.find(".value_kind");
      if (!size || size->kind != Msg::Kind::Int || size->i <= 0 || !kind || kind->kind != Msg::Kind::Str)
        return std::nullopt;
      if (kind->s.rfind("hidden_", 0) == 0) continue;  // the runtime's own, after the user's
      sizes.push_back(static_cast<std::size_t>(size->i));
    }
    return sizes;
  }
  return std::nullopt;
}

}  // namespace torsh::cuda
