// The GGUF layout, in file order: magic "GGUF", u32 version, u64 tensor count,
// u64 metadata count, the metadata (key string, u32 type, value), the tensor
// infos (name, u32 n_dims, i64 dims, u32 ggml type, u64 offset), padding to
// the alignment, then the data section the tensor offsets point into.
#include "gguf_parse.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "gguf_metadata.hpp"

namespace torsh::model::detail {

namespace {

constexpr std::string_view kConvertAdvice =
    "convert the model again with a current llama.cpp (convert_hf_to_gguf.py writes little-endian GGUF v3)";

// The fewest bytes one metadata entry and one tensor info take in the file.
constexpr std::uint64_t kMinMetadataEntry = 8 + 4 + 1;   // empty key, type, a u8
constexpr std::uint64_t kMinTensorInfo = 8 + 4 + 4 + 8;  // empty name, n_dims 0, type, offset

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) { return __builtin_mul_overflow(a, b, &out); }

void read_magic(ByteCursor& c) {
  const auto magic = c.take(4, "the magic number");
  const char expected[] = {'G', 'G', 'U', 'F'};
  for (int k = 0; k < 4; ++k)
    if (std::to_integer<char>(magic[k]) != expected[k])
      c.fail_at(0,
                "not a GGUF file: it starts with '" +
                    printable({reinterpret_cast<const char*>(magic.data()), magic.size()}) + "', not 'GGUF'",
                "check the path; models in the older GGML/GGJT formats must be converted to GGUF");
}

std::uint32_t read_version(ByteCursor& c) {
  const std::size_t at = c.offset();
  const std::uint32_t v = c.u32("the version");
  if (v == 2 || v == 3) return v;
  if (v == 1)
    c.fail_at(at, "GGUF version 1 is not supported (it stores counts and lengths in 32 bits)", kConvertAdvice);
  const std::uint32_t swapped = __builtin_bswap32(v);
  if (swapped >= 1 && swapped <= 3)
    c.fail_at(at,
              "a big-endian GGUF file (version " + std::to_string(swapped) +
                  " byte-swapped); only little-endian files are supported",
              kConvertAdvice);
  c.fail_at(at, "unsupported GGUF version " + std::to_string(v) + " (this reader reads versions 2 and 3)",
            kConvertAdvice);
}

// general.alignment (`v`, read at byte `at`), or the default when it is absent.
std::size_t read_alignment(const GgufValue* v, std::size_t at, ByteCursor& c) {
  if (!v) return kDefaultAlignment;
  if (!v->is_integer())
    c.fail_at(at, "general.alignment is a " + std::string(gguf_type_name(v->type)) + ", not an integer");
  const bool is_signed =
      v->type == GgufType::I8 || v->type == GgufType::I16 || v->type == GgufType::I32 || v->type == GgufType::I64;
  if (is_signed && v->i <= 0) c.fail_at(at, "general.alignment is " + v->to_string() + "; it must be a power of two");
  const std::uint64_t a = is_signed ? static_cast<std::uint64_t>(v->i) : v->u;
  if (a == 0 || (a & (a - 1)) != 0)
    c.fail_at(at, "general.alignment is " + v->to_string() + "; it must be a power of two");
  if (a > std::numeric_limits<std::size_t>::max() / 2)
    c.fail_at(at, "general.alignment " + v->to_string() + " is too large");
  return static_cast<std::size_t>(a);
}

struct TensorPlace {
  std::size_t info_at;    // where the tensor's info starts, for errors
  std::size_t offset_at;  // where its offset field is
};

GgufTensorInfo read_tensor_info(ByteCursor& c, TensorPlace& place) {
  GgufTensorInfo t;
  place.info_at = c.offset();
  t.name = c.string("a tensor name");
  const std::string who = "tensor '" + printable(t.name) + "'";

  const std::size_t dims_at = c.offset();
  const std::uint32_t n_dims = c.u32("a tensor's dimension count");
  if (n_dims > kMaxTensorDims)
    c.fail_at(dims_at, who + " has " + std::to_string(n_dims) + " dimensions; GGUF tensors have at most " +
                           std::to_string(kMaxTensorDims));
  // Dimensions of 0 are accepted, as ggml does: such a tensor has no bytes.
  // The sizes must multiply within int64 whatever their order, so a 0 does not
  // hide an overflowing product of the others.
  std::uint64_t product = 1;
  for (std::uint32_t k = 0; k < n_dims; ++k) {
    const std::size_t at = c.offset();
    const std::uint64_t d = c.u64("a tensor dimension");
    if (d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      c.fail_at(at, who + " dimension " + std::to_string(k) + " is negative (" +
                        std::to_string(static_cast<std::int64_t>(d)) + ")");
    if (mul_overflows(product, std::max<std::uint64_t>(d, 1), product) ||
        product > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      c.fail_at(at, who + " has more than 2^63 - 1 elements (dimension " + std::to_string(k) + " is " +
                        std::to_string(d) + ")");
    t.dims.push_back(static_cast<std::int64_t>(d));
  }

  const std::size_t type_at = c.offset();
  const std::uint32_t type = c.u32("a tensor's type");
  const auto block = ggml_type_block(type);
  if (!block)
    c.fail_at(type_at, who + " has ggml type " + std::to_string(type) + ", which this reader does not know",
              "the file may need a newer torsh, or it is corrupt");
  t.type = static_cast<GgmlType>(type);
  const auto [block_elems, block_bytes] = *block;
  if (t.cols() % block_elems != 0)
    c.fail_at(dims_at, who + " has rows of " + std::to_string(t.cols()) + " elements, not a multiple of the " +
                           std::string(ggml_type_name(t.type)) + " block size " + std::to_string(block_elems));
  std::uint64_t row_bytes = 0, nbytes = 0;
  if (mul_overflows(static_cast<std::uint64_t>(t.cols() / block_elems), block_bytes, row_bytes) ||
      mul_overflows(row_bytes, static_cast<std::uint64_t>(t.rows()), nbytes) ||
      nbytes > std::numeric_limits<std::size_t>::max())
    c.fail_at(dims_at, who + " would take more than 2^64 bytes");
  t.nbytes = static_cast<std::size_t>(nbytes);

  place.offset_at = c.offset();
  t.offset = c.u64("a tensor's data offset");
  return t;
}

// Every tensor inside the file, at an aligned offset, none overlapping another
// (ggml writes tensors one after the other; overlapping ones would alias).
void check_tensor_places(const GgufContents& out, const std::vector<TensorPlace>& places, std::size_t file_size,
                         ByteCursor& c) {
  const std::uint64_t data_size = file_size - out.data_offset;
  for (std::size_t k = 0; k < out.tensors.size(); ++k) {
    const auto& t = out.tensors[k];
    const std::string who = "tensor '" + printable(t.name) + "'";
    if (t.offset % out.alignment != 0)
      c.fail_at(places[k].offset_at, who + " data offset " + std::to_string(t.offset) +
                                         " is not a multiple of the alignment " + std::to_string(out.alignment));
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      c.fail_at(places[k].offset_at, who + " (" + std::to_string(t.nbytes) + " bytes at data offset " +
                                         std::to_string(t.offset) +
                                         ") ends past the end of the file, whose data "
                                         "section holds " +
                                         std::to_string(data_size) + " bytes");
  }
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < out.tensors.size(); ++k)
    if (out.tensors[k].nbytes > 0) order.push_back(k);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return out.tensors[a].offset < out.tensors[b].offset; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const auto& prev = out.tensors[order[k - 1]];
    const auto& cur = out.tensors[order[k]];
    if (prev.offset + prev.nbytes > cur.offset)
      c.fail_at(places[order[k]].offset_at, "tensor '" + printable(cur.name) + "' at data offset " +
                                                std::to_string(cur.offset) + " overlaps tensor '" +
                                                printable(prev.name) + "' (data offset " + std::to_string(prev.offset) +
                                                ", " + std::to_string(prev.nbytes) + " bytes)");
  }
}

}  // namespace

GgufContents parse_gguf(std::span<const std::byte> bytes, const std::string& file) {
  ByteCursor c(bytes, file);
  GgufContents out;
  read_magic(c);
  out.version = read_version(c);

  const std::size_t counts_at = c.offset();
  const std::uint64_t tensor_count = c.u64("the tensor count");
  const std::uint64_t kv_count = c.u64("the metadata count");
  if (tensor_count > c.remaining() / kMinTensorInfo || kv_count > c.remaining() / kMinMetadataEntry ||
      tensor_count * kMinTensorInfo + kv_count * kMinMetadataEntry > c.remaining())
    c.fail_at(counts_at, "the header claims " + std::to_string(tensor_count) + " tensors and " +
                             std::to_string(kv_count) + " metadata entries, more than the " +
                             std::to_string(c.remaining()) + " bytes left can hold");

  MetadataReader values(c);
  std::set<std::string, std::less<>> keys;
  std::size_t alignment_index = 0, alignment_at = 0;
  out.metadata.reserve(static_cast<std::size_t>(kv_count));
  for (std::uint64_t k = 0; k < kv_count; ++k) {
    const std::size_t key_at = c.offset();
    std::string key = c.string("a metadata key");
    if (keys.count(key)) c.fail_at(key_at, "metadata key '" + printable(key) + "' appears twice");
    const GgufType type = values.value_type("the value type of key '" + printable(key) + "'");
    if (key == "general.alignment") {
      alignment_index = out.metadata.size();
      alignment_at = c.offset();
    }
    GgufValue v = values.value(type);
    keys.insert(key);
    out.metadata.emplace_back(std::move(key), std::move(v));
  }
  const bool has_alignment = keys.count("general.alignment") != 0;
  out.alignment = read_alignment(has_alignment ? &out.metadata[alignment_index].second : nullptr, alignment_at, c);

  std::set<std::string, std::less<>> names;
  std::vector<TensorPlace> places(static_cast<std::size_t>(tensor_count));
  out.tensors.reserve(static_cast<std::size_t>(tensor_count));
  for (std::uint64_t k = 0; k < tensor_count; ++k) {
    GgufTensorInfo t = read_tensor_info(c, places[k]);
    if (!names.insert(t.name).second)
      c.fail_at(places[k].info_at, "tensor name '" + printable(t.name) + "' appears twice");
    out.tensors.push_back(std::move(t));
  }

  // The data section starts at the next multiple of the alignment. A file
  // without tensors may end before that padding.
  const std::uint64_t infos_end = c.offset();
  const std::uint64_t data_offset = (infos_end + out.alignment - 1) / out.alignment * out.alignment;
  if (data_offset > bytes.size()) {
    if (!out.tensors.empty())
      c.fail_at(infos_end, "the data section would start at byte " + std::to_string(data_offset) +
                               " (the tensor infos end here, aligned to " + std::to_string(out.alignment) +
                               ") but the file has " + std::to_string(bytes.size()) + " bytes");
    out.data_offset = bytes.size();
  } else {
    out.data_offset = static_cast<std::size_t>(data_offset);
  }
  check_tensor_places(out, places, bytes.size(), c);
  return out;
}

}  // namespace torsh::model::detail
