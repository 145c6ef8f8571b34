// GGUF metadata value types, ggml tensor types and their block sizes, and the
// per-value and per-tensor helpers declared in gguf.hpp.
#include <array>
#include <charconv>
#include <limits>
#include <mutex>
#include <set>

#include "gguf_cursor.hpp"
#include "torsh/core/error.hpp"
#include "torsh/model/gguf.hpp"

namespace torsh::model {

namespace detail {

void gguf_fail(const std::string& file, std::uint64_t offset, const std::string& what, std::string_view advice) {
  throw Error(ErrorCode::InvalidArgument, "GGUF " + file + ": byte " + std::to_string(offset) + ": " + what,
              {.op = "gguf"}, {std::string(advice)});
}

}  // namespace detail

std::string_view gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::U8: return "u8";
    case GgufType::I8: return "i8";
    case GgufType::U16: return "u16";
    case GgufType::I16: return "i16";
    case GgufType::U32: return "u32";
    case GgufType::I32: return "i32";
    case GgufType::F32: return "f32";
    case GgufType::Bool: return "bool";
    case GgufType::String: return "string";
    case GgufType::Array: return "array";
    case GgufType::U64: return "u64";
    case GgufType::I64: return "i64";
    case GgufType::F64: return "f64";
  }
  return "unknown type";
}

namespace {

struct GgmlTypeInfo {
  GgmlType type;
  std::string_view name;
  std::int64_t block_elems;
  std::size_t block_bytes;
};

// Block layouts as ggml defines them (ggml-common.h): every type a current
// GGUF file can hold (31-33 and 36-38 were removed from the format). Q8_1 is
// 36 bytes there (two f16 scales and 32 quants); the gguf Python package's
// table still says 40, from before its scales became f16.
constexpr std::array<GgmlTypeInfo, 35> kGgmlTypes{{
    {GgmlType::F32, "f32", 1, 4},
    {GgmlType::F16, "f16", 1, 2},
    {GgmlType::Q4_0, "q4_0", 32, 18},
    {GgmlType::Q4_1, "q4_1", 32, 20},
    {GgmlType::Q5_0, "q5_0", 32, 22},
    {GgmlType::Q5_1, "q5_1", 32, 24},
    {GgmlType::Q8_0, "q8_0", 32, 34},
    {GgmlType::Q8_1, "q8_1", 32, 36},
    {GgmlType::Q2_K, "q2_k", 256, 84},
    {GgmlType::Q3_K, "q3_k", 256, 110},
    {GgmlType::Q4_K, "q4_k", 256, 144},
    {GgmlType::Q5_K, "q5_k", 256, 176},
    {GgmlType::Q6_K, "q6_k", 256, 210},
    {GgmlType::Q8_K, "q8_k", 256, 292},
    {GgmlType::I8, "i8", 1, 1},
    {GgmlType::I16, "i16", 1, 2},
    {GgmlType::I32, "i32", 1, 4},
    {GgmlType::I64, "i64", 1, 8},
    {GgmlType::F64, "f64", 1, 8},
    {GgmlType::BF16, "bf16", 1, 2},
    {GgmlType::IQ2_XXS, "iq2_xxs", 256, 66},
    {GgmlType::IQ2_XS, "iq2_xs", 256, 74},
    {GgmlType::IQ3_XXS, "iq3_xxs", 256, 98},
    {GgmlType::IQ1_S, "iq1_s", 256, 50},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18},
    {GgmlType::IQ3_S, "iq3_s", 256, 110},
    {GgmlType::IQ2_S, "iq2_s", 256, 82},
    {GgmlType::IQ4_XS, "iq4_xs", 256, 136},
    {GgmlType::IQ1_M, "iq1_m", 256, 56},
    {GgmlType::TQ1_0, "tq1_0", 256, 54},
    {GgmlType::TQ2_0, "tq2_0", 256, 66},
    {GgmlType::MXFP4, "mxfp4", 32, 17},
    {GgmlType::NVFP4, "nvfp4", 64, 36},
    {GgmlType::Q1_0, "q1_0", 128, 18},
    {GgmlType::Q2_0, "q2_0", 64, 18},
}};

const GgmlTypeInfo* ggml_type_info(std::uint32_t type) {
  for (const auto& info : kGgmlTypes)
    if (static_cast<std::uint32_t>(info.type) == type) return &info;
  return nullptr;
}

[[noreturn]] void wrong_kind(const GgufValue& v, std::string_view wanted) {
  throw Error(ErrorCode::InvalidArgument,
              "GGUF value is " + std::string(gguf_type_name(v.type)) + ", not " + std::string(wanted), {.op = "gguf"});
}

std::string number_text(double f) {
  std::array<char, 32> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), f);
  return ec == std::errc{} ? std::string(buf.data(), end) : std::to_string(f);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string_view ggml_type_name(GgmlType t) {
  if (const auto* info = ggml_type_info(static_cast<std::uint32_t>(t))) return info->name;
  // The returned view must stay valid, so names for unknown numbers are kept
  // (the reader refuses unknown types before naming them, so few are ever made).
  static std::mutex mutex;
  static std::set<std::string, std::less<>> unknown;
  const std::lock_guard lock(mutex);
  return *unknown.insert("type " + std::to_string(static_cast<std::uint32_t>(t))).first;
}

std::optional<std::pair<std::int64_t, std::size_t>> ggml_type_block(std::uint32_t type) {
  if (const auto* info = ggml_type_info(type)) return std::pair{info->block_elems, info->block_bytes};
  return std::nullopt;
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::U16:
    case GgufType::I16:
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::U64:
    case GgufType::I64: return true;
    default: return false;
  }
}

bool GgufValue::is_float() const { return type == GgufType::F32 || type == GgufType::F64; }

static bool is_unsigned(GgufType t) {
  return t == GgufType::U8 || t == GgufType::U16 || t == GgufType::U32 || t == GgufType::U64;
}

std::int64_t GgufValue::as_int() const {
  if (type == GgufType::Bool) return i;
  if (!is_integer()) wrong_kind(*this, "an integer");
  if (!is_unsigned(type)) return i;
  if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw Error(ErrorCode::InvalidArgument, "GGUF u64 value " + std::to_string(u) + " does not fit in int64",
                {.op = "gguf"});
  return static_cast<std::int64_t>(u);
}

double GgufValue::as_float() const {
  if (is_float()) return f;
  if (!is_integer()) wrong_kind(*this, "a number");
  return is_unsigned(type) ? static_cast<double>(u) : static_cast<double>(i);
}

bool GgufValue::as_bool() const {
  if (type == GgufType::Bool) return i != 0;
  if (is_integer()) {
    const bool zero = is_unsigned(type) ? u == 0 : i == 0;
    const bool one = is_unsigned(type) ? u == 1 : i == 1;
    if (zero || one) return one;
    throw Error(ErrorCode::InvalidArgument, "GGUF integer " + to_string() + " is not a boolean (only 0 and 1 are)",
                {.op = "gguf"});
  }
  wrong_kind(*this, "a bool");
}

const std::string& GgufValue::as_string() const {
  if (type != GgufType::String) wrong_kind(*this, "a string");
  return s;
}

std::string GgufValue::to_string(std::size_t max_elems) const {
  switch (type) {
    case GgufType::Bool: return i ? "true" : "false";
    case GgufType::String: return quoted(s);
    case GgufType::F32:
    case GgufType::F64: return number_text(f);
    case GgufType::Array: {
      std::string out = "[";
      const std::size_t shown = array.size() < max_elems ? array.size() : max_elems;
      for (std::size_t k = 0; k < shown; ++k) {
        if (k) out += ", ";
        out += array[k].to_string(max_elems);
      }
      if (shown < array.size()) {
        if (shown) out += ", ";
        out += "... (" + std::to_string(array.size()) + " " + std::string(gguf_type_name(elem_type)) + " items)";
      }
      return out + "]";
    }
    default: return is_unsigned(type) ? std::to_string(u) : std::to_string(i);
  }
}

std::int64_t GgufTensorInfo::numel() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;  // checked against overflow when the file was read
  return n;
}

std::int64_t GgufTensorInfo::rows() const {
  std::int64_t n = 1;
  for (std::size_t k = 1; k < dims.size(); ++k) n *= dims[k];
  return n;
}

}  // namespace torsh::model
