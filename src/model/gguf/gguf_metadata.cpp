// Reading GGUF metadata values: scalars, strings and (nested) arrays. An
// array's length is checked against the bytes left before anything is
// reserved, so a hostile length cannot make the reader allocate.
#include <bit>
#include <cstring>

#include "gguf_metadata.hpp"

namespace torsh::model::detail {

namespace {

constexpr std::uint32_t kLastValueType = static_cast<std::uint32_t>(GgufType::F64);

// The fewest bytes one value of type `t` takes in the file.
std::uint64_t min_encoded_size(GgufType t) {
  switch (t) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::Bool: return 1;
    case GgufType::U16:
    case GgufType::I16: return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32: return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64: return 8;
    case GgufType::String: return 8;  // the length
    case GgufType::Array: return 12;  // element type and length
  }
  return 1;
}

}  // namespace

std::string printable(std::string_view s) {
  constexpr std::size_t kShown = 80;
  std::string out;
  for (std::size_t k = 0; k < s.size() && k < kShown; ++k) {
    const auto c = static_cast<unsigned char>(s[k]);
    if (c < 0x20 || c >= 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kShown) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

GgufType MetadataReader::value_type(std::string_view what) {
  const std::size_t at = c_.offset();
  const std::uint32_t t = c_.u32(what);
  if (t > kLastValueType)
    c_.fail_at(at, std::string(what) + " is " + std::to_string(t) + ", not a GGUF value type (0 to " +
                       std::to_string(kLastValueType) + ")");
  return static_cast<GgufType>(t);
}

void MetadataReader::count_values(std::uint64_t n, std::size_t at) {
  if (n > kMaxMetadataValues - values_)
    c_.fail_at(at,
               "the metadata holds more than " + std::to_string(kMaxMetadataValues) +
                   " values in all (arrays included), more than this reader accepts",
               "no real model needs this many; the file is probably corrupt or hostile");
  values_ += n;
}

GgufValue MetadataReader::value(GgufType type, int depth) {
  count_values(1, c_.offset());
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::U8: v.u = c_.u8("a u8 value"); break;
    case GgufType::I8: v.i = static_cast<std::int8_t>(c_.u8("an i8 value")); break;
    case GgufType::U16: v.u = c_.u16("a u16 value"); break;
    case GgufType::I16: v.i = static_cast<std::int16_t>(c_.u16("an i16 value")); break;
    case GgufType::U32: v.u = c_.u32("a u32 value"); break;
    case GgufType::I32: v.i = static_cast<std::int32_t>(c_.u32("an i32 value")); break;
    case GgufType::U64: v.u = c_.u64("a u64 value"); break;
    case GgufType::I64: v.i = static_cast<std::int64_t>(c_.u64("an i64 value")); break;
    case GgufType::F32: v.f = std::bit_cast<float>(c_.u32("an f32 value")); break;
    case GgufType::F64: v.f = std::bit_cast<double>(c_.u64("an f64 value")); break;
    case GgufType::Bool: {
      const std::size_t at = c_.offset();
      const std::uint8_t b = c_.u8("a bool value");
      if (b > 1) c_.fail_at(at, "a bool value is " + std::to_string(b) + " (only 0 and 1 are booleans)");
      v.i = b;
      break;
    }
    case GgufType::String: v.s = c_.string("a string value"); break;
    case GgufType::Array: array(v, depth); break;
  }
  return v;
}

void MetadataReader::array(GgufValue& v, int depth) {
  const std::size_t at = c_.offset();
  if (depth >= kMaxArrayDepth)
    c_.fail_at(at, "arrays are nested more than " + std::to_string(kMaxArrayDepth) + " deep",
               "no real model nests arrays this deep; the file is probably corrupt or hostile");
  v.elem_type = value_type("an array's element type");
  const std::size_t count_at = c_.offset();
  const std::uint64_t n = c_.u64("an array's length");
  const std::uint64_t min_size = min_encoded_size(v.elem_type);
  if (n > c_.remaining() / min_size)
    c_.fail_at(count_at, "an array claims " + std::to_string(n) + " " + std::string(gguf_type_name(v.elem_type)) +
                             " values (at least " + std::to_string(min_size) + " bytes each) but only " +
                             std::to_string(c_.remaining()) + " bytes are left in the file");
  // The elements count against the budget as they are read (each value() call).
  if (n > kMaxMetadataValues - values_) count_values(n, count_at);
  v.array.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t k = 0; k < n; ++k) v.array.push_back(value(v.elem_type, depth + 1));
}

}  // namespace torsh::model::detail
