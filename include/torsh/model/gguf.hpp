#pragma once
// GGUF (v2 and v3) files, read in place: the file is memory-mapped, the header,
// metadata and tensor infos are parsed with every offset and size checked
// against the file before use, and tensor data is a view into the mapping.
// A truncated, corrupt or hostile file is an InvalidArgument error naming the
// file, the byte offset and what was wrong there; nothing reads past the mapping.
//
// What the reader accepts, where the format leaves it open:
//  - little-endian v2 and v3 only (v1 stores 32-bit counts; a big-endian file
//    shows a byte-swapped version and is refused as such);
//  - metadata keys and tensor names unique; a bool is the byte 0 or 1;
//  - arrays nest at most 8 deep, and all metadata together holds at most 2^24
//    values (array elements included), which bounds what a small hostile
//    file can make the reader allocate;
//  - general.alignment may be any integer type holding a nonzero power of two;
//  - a tensor has at most 4 dimensions (GGML_MAX_DIMS); a dimension of 0 is
//    allowed, as ggml allows it (the tensor has no bytes), but the sizes must
//    multiply within int64 whatever their order; rows are whole blocks of the type;
//  - tensor data lies at an aligned offset inside the file, and no two tensors'
//    bytes overlap (ggml never writes them so); gaps and any order are allowed;
//  - a file without tensors may end before the padding of its data section.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torsh::model {

// Metadata value types, numbered as in the file.
enum class GgufType : std::uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
std::string_view gguf_type_name(GgufType t);

// One metadata value. Scalars keep their file type; integers are held as
// int64/uint64, floats as double. Arrays hold their element type and elements
// (arrays of arrays are allowed, as the format allows).
struct GgufValue {
  GgufType type = GgufType::U8;
  std::int64_t i = 0;                 // signed integer types and Bool (0/1)
  std::uint64_t u = 0;                // unsigned integer types
  double f = 0.0;                     // F32, F64
  std::string s;                      // String
  GgufType elem_type = GgufType::U8;  // Array
  std::vector<GgufValue> array;       // Array

  bool is_integer() const;
  bool is_float() const;
  // Converting readers; throw InvalidArgument naming the type when the value is not of a fitting kind.
  std::int64_t as_int() const;  // any integer type or Bool; U64 above INT64_MAX refused
  double as_float() const;      // any integer or float type
  bool as_bool() const;         // Bool (or an integer 0/1)
  const std::string& as_string() const;
  std::string to_string(std::size_t max_elems = 8) const;  // for printing: arrays abbreviated
};

// ggml tensor types, numbered as in the file: every type a current GGUF file
// can hold. The model computes with those model::weight_type_supported()
// names; other types are read (their sizes known) but refused where used.
enum class GgmlType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
};
std::string_view ggml_type_name(GgmlType t);  // "q4_1"; "type 42" for unknown numbers
// Elements per block and bytes per block; nullopt for a type number this reader does not know.
std::optional<std::pair<std::int64_t, std::size_t>> ggml_type_block(std::uint32_t type);

struct GgufTensorInfo {
  std::string name;
  // ggml order: dims[0] is the fastest-varying (a row's length). A [rows, cols]
  // matrix in row-major terms has dims = {cols, rows}.
  std::vector<std::int64_t> dims;
  GgmlType type = GgmlType::F32;
  std::uint64_t offset = 0;  // from the start of the data section (aligned)
  std::size_t nbytes = 0;    // checked: inside the file
  std::int64_t numel() const;
  std::int64_t rows() const;  // product of dims[1..] (1 for a vector)
  std::int64_t cols() const { return dims.empty() ? 1 : dims[0]; }
};

class GgufFile {
 public:
  // Maps and parses `path`. Errors: a missing/unreadable file (InvalidArgument
  // with the OS reason), not GGUF, an unsupported version, or any structural fault.
  static GgufFile open(const std::string& path);
  // Parses a copy of `bytes` (tests and fuzzing); `name` stands for the path in errors.
  static GgufFile parse(std::span<const std::byte> bytes, std::string name = "<memory>");

  const std::string& path() const;
  std::uint32_t version() const;
  std::size_t alignment() const;    // general.alignment, default 32
  std::size_t data_offset() const;  // file offset of the data section
  std::size_t file_size() const;

  const std::vector<std::pair<std::string, GgufValue>>& metadata() const;
  const GgufValue* find(std::string_view key) const;  // nullptr when absent
  // Typed getters: a missing key or a wrong type is InvalidArgument naming the key and file.
  const GgufValue& at(std::string_view key) const;
  std::int64_t get_int(std::string_view key) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  double get_float(std::string_view key) const;
  double get_float(std::string_view key, double fallback) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::string get_string(std::string_view key) const;
  std::string get_string(std::string_view key, std::string fallback) const;
  std::vector<std::string> get_strings(std::string_view key) const;  // array of strings
  std::vector<float> get_floats(std::string_view key) const;         // array of numbers
  std::vector<std::int64_t> get_ints(std::string_view key) const;    // array of integers

  const std::vector<GgufTensorInfo>& tensors() const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;  // nullptr when absent
  const GgufTensorInfo& tensor(std::string_view name) const;       // InvalidArgument when absent
  // The tensor's bytes inside the mapping (valid while this file or a copy of it lives).
  std::span<const std::byte> tensor_data(const GgufTensorInfo& t) const;
  // Copies the tensor's bytes (t.nbytes) into `dst`: read from the file for an
  // opened file, whose mapped pages this leaves untouched (so they are not
  // resident in this process); a copy for a parsed one.
  void read_tensor_data(const GgufTensorInfo& t, void* dst) const;
  // Keeps the mapping alive: hand it to whatever wraps tensor_data() without copying.
  std::shared_ptr<const void> keepalive() const;

 private:
  struct State;
  std::shared_ptr<const State> s_;
};

}  // namespace torsh::model
