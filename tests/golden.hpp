#pragma once
// Reads the golden files written by scripts/golden/make-golden.py (format described there).
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "torsh/torsh.hpp"

namespace golden {

struct Array {
  torsh::DType dtype = torsh::DType::F32;
  std::vector<std::int64_t> dims;
  std::vector<unsigned char> bytes;
  std::vector<float> f32() const {
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
  std::vector<std::int64_t> i64() const {
    std::vector<std::int64_t> v(bytes.size() / 8);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
  torsh::Tensor on(torsh::Backend& b) const { return b.from_host(bytes.data(), torsh::Shape(dims), dtype); }
};

inline std::map<std::string, Array> load(const std::string& name) {
  const std::string path = std::string(TORSH_GOLDEN_DIR) + "/" + name + ".bin";
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("missing golden file " + path + " (run scripts/golden/make-golden.py)");
  auto rd = [&](void* p, std::size_t n) {
    f.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    if (!f) throw std::runtime_error("truncated golden file " + path);
  };
  char magic[4];
  rd(magic, 4);
  if (std::memcmp(magic, "TGLD", 4) != 0) throw std::runtime_error("bad golden magic in " + path);
  std::uint32_t count;
  rd(&count, 4);
  std::map<std::string, Array> out;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t len;
    rd(&len, 4);
    std::string key(len, '\0');
    rd(key.data(), len);
    std::uint8_t code;
    std::uint32_t nd;
    rd(&code, 1);
    rd(&nd, 4);
    Array a;
    a.dtype = code == 0 ? torsh::DType::F32 : torsh::DType::I64;
    a.dims.resize(nd);
    rd(a.dims.data(), 8 * nd);
    std::int64_t n = 1;
    for (auto d : a.dims) n *= d;
    a.bytes.resize(static_cast<std::size_t>(n) * torsh::dtype_size(a.dtype));
    rd(a.bytes.data(), a.bytes.size());
    out[key] = std::move(a);
  }
  return out;
}

}  // namespace golden
