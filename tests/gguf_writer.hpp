#pragma once
// A small GGUF writer for tests: builds v2/v3 files byte by byte, laid out as
// ggml writes them (tensor infos, padding to the alignment, each tensor's data
// padded to the alignment), and records where each field landed so hostile
// tests can patch a valid file at a known offset. It knows nothing of ggml
// block sizes: each tensor's bytes are given.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "torsh/model/gguf.hpp"

namespace torsh::test {

using Bytes = std::vector<std::byte>;

class ByteWriter {
 public:
  template <class T>
  void le(T v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    for (std::size_t k = 0; k < sizeof(T); ++k) out_.push_back(static_cast<std::byte>((bits >> (8 * k)) & 0xff));
  }
  void u8(std::uint8_t v) { le(v); }
  void u32(std::uint32_t v) { le(v); }
  void u64(std::uint64_t v) { le(v); }
  void str(std::string_view s) {
    u64(s.size());
    for (char c : s) out_.push_back(static_cast<std::byte>(c));
  }
  void raw(const Bytes& b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void pad_to(std::size_t alignment) {
    while (out_.size() % alignment) out_.push_back(std::byte{0});
  }
  std::size_t size() const { return out_.size(); }
  Bytes& bytes() { return out_; }

 private:
  Bytes out_;
};

// Overwrites a little-endian value inside a built file.
template <class T>
void patch(Bytes& file, std::size_t at, T v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  for (std::size_t k = 0; k < sizeof(T); ++k) file.at(at + k) = static_cast<std::byte>((bits >> (8 * k)) & 0xff);
}

// Metadata values for the writer, built with the reader's own value struct.
namespace gv {
using model::GgufType;
using model::GgufValue;
inline GgufValue unsigned_of(GgufType t, std::uint64_t u) {
  GgufValue v;
  v.type = t;
  v.u = u;
  return v;
}
inline GgufValue signed_of(GgufType t, std::int64_t i) {
  GgufValue v;
  v.type = t;
  v.i = i;
  return v;
}
inline GgufValue u8(std::uint8_t x) { return unsigned_of(GgufType::U8, x); }
inline GgufValue u16(std::uint16_t x) { return unsigned_of(GgufType::U16, x); }
inline GgufValue u32(std::uint32_t x) { return unsigned_of(GgufType::U32, x); }
inline GgufValue u64(std::uint64_t x) { return unsigned_of(GgufType::U64, x); }
inline GgufValue i8(std::int8_t x) { return signed_of(GgufType::I8, x); }
inline GgufValue i16(std::int16_t x) { return signed_of(GgufType::I16, x); }
inline GgufValue i32(std::int32_t x) { return signed_of(GgufType::I32, x); }
inline GgufValue i64(std::int64_t x) { return signed_of(GgufType::I64, x); }
inline GgufValue boolean(bool x) { return signed_of(GgufType::Bool, x ? 1 : 0); }
inline GgufValue f32(float x) {
  GgufValue v;
  v.type = GgufType::F32;
  v.f = x;
  return v;
}
inline GgufValue f64(double x) {
  GgufValue v;
  v.type = GgufType::F64;
  v.f = x;
  return v;
}
inline GgufValue str(std::string x) {
  GgufValue v;
  v.type = GgufType::String;
  v.s = std::move(x);
  return v;
}
inline GgufValue array(GgufType elem, std::vector<GgufValue> items) {
  GgufValue v;
  v.type = GgufType::Array;
  v.elem_type = elem;
  v.array = std::move(items);
  return v;
}
}  // namespace gv

inline void write_value(ByteWriter& w, const model::GgufValue& v) {
  using model::GgufType;
  switch (v.type) {
    case GgufType::U8: w.u8(static_cast<std::uint8_t>(v.u)); break;
    case GgufType::I8: w.le(static_cast<std::int8_t>(v.i)); break;
    case GgufType::U16: w.le(static_cast<std::uint16_t>(v.u)); break;
    case GgufType::I16: w.le(static_cast<std::int16_t>(v.i)); break;
    case GgufType::U32: w.u32(static_cast<std::uint32_t>(v.u)); break;
    case GgufType::I32: w.le(static_cast<std::int32_t>(v.i)); break;
    case GgufType::U64: w.u64(v.u); break;
    case GgufType::I64: w.le(v.i); break;
    case GgufType::F32: w.le(static_cast<float>(v.f)); break;
    case GgufType::F64: w.le(v.f); break;
    case GgufType::Bool: w.u8(v.i ? 1 : 0); break;
    case GgufType::String: w.str(v.s); break;
    case GgufType::Array:
      w.u32(static_cast<std::uint32_t>(v.elem_type));
      w.u64(v.array.size());
      for (const auto& e : v.array) write_value(w, e);
      break;
  }
}

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> dims;  // ggml order
  std::uint32_t type;              // ggml type number
  Bytes data;
};

// Where things landed in the last build().
struct GgufLayout {
  std::size_t version_at = 4, counts_at = 8;
  std::vector<std::size_t> key_at;            // per metadata entry: its key's length field
  std::vector<std::size_t> value_at;          // per metadata entry: its value
  std::vector<std::size_t> tensor_info_at;    // per tensor: its name's length field
  std::vector<std::size_t> tensor_type_at;    // per tensor: its type field
  std::vector<std::size_t> tensor_offset_at;  // per tensor: its offset field
  std::vector<std::uint64_t> tensor_offset;   // per tensor: offset within the data section
  std::size_t data_offset = 0;
  std::size_t data_end = 0;  // the end of the last tensor's bytes (before trailing padding)
};

class GgufWriter {
 public:
  explicit GgufWriter(std::uint32_t version = 3, std::size_t alignment = 32)
      : version_(version), alignment_(alignment) {}

  GgufWriter& kv(std::string key, model::GgufValue v) {
    kvs_.emplace_back(std::move(key), std::move(v));
    return *this;
  }
  GgufWriter& tensor(TensorSpec t) {
    tensors_.push_back(std::move(t));
    return *this;
  }

  Bytes build(GgufLayout* layout_out = nullptr) const {
    GgufLayout layout;
    ByteWriter w;
    for (char c : std::string_view("GGUF")) w.u8(static_cast<std::uint8_t>(c));
    w.u32(version_);
    w.u64(tensors_.size());
    w.u64(kvs_.size());
    for (const auto& [key, value] : kvs_) {
      layout.key_at.push_back(w.size());
      w.str(key);
      w.u32(static_cast<std::uint32_t>(value.type));
      layout.value_at.push_back(w.size());
      write_value(w, value);
    }
    std::uint64_t offset = 0;
    for (const auto& t : tensors_) {
      layout.tensor_info_at.push_back(w.size());
      w.str(t.name);
      w.u32(static_cast<std::uint32_t>(t.dims.size()));
      for (auto d : t.dims) w.le(d);
      layout.tensor_type_at.push_back(w.size());
      w.u32(t.type);
      layout.tensor_offset_at.push_back(w.size());
      w.u64(offset);
      layout.tensor_offset.push_back(offset);
      offset += (t.data.size() + alignment_ - 1) / alignment_ * alignment_;
    }
    w.pad_to(alignment_);
    layout.data_offset = w.size();
    for (const auto& t : tensors_) {
      w.raw(t.data);
      layout.data_end = w.size();
      w.pad_to(alignment_);
    }
    if (layout_out) *layout_out = layout;
    return std::move(w.bytes());
  }

 private:
  std::uint32_t version_;
  std::size_t alignment_;
  std::vector<std::pair<std::string, model::GgufValue>> kvs_;
  std::vector<TensorSpec> tensors_;
};

}  // namespace torsh::test
