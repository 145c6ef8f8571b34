// GgufFile: the parsed contents and the bytes they point into, shared by
// copies of the file object and by whatever holds keepalive().
#include "torsh/model/gguf.hpp"

#include <map>

#include "file_bytes.hpp"
#include "gguf_metadata.hpp"
#include "gguf_parse.hpp"
#include "torsh/core/error.hpp"

namespace torsh::model {

struct GgufFile::State {
  State(std::string path_, detail::FileBytes bytes_)
      : path(std::move(path_)), bytes(std::move(bytes_)), contents(detail::parse_gguf(bytes.bytes, path)) {
    for (std::size_t k = 0; k < contents.metadata.size(); ++k) key_index.emplace(contents.metadata[k].first, k);
    for (std::size_t k = 0; k < contents.tensors.size(); ++k) tensor_index.emplace(contents.tensors[k].name, k);
  }

  std::string path;
  detail::FileBytes bytes;
  detail::GgufContents contents;
  std::map<std::string, std::size_t, std::less<>> key_index;
  std::map<std::string, std::size_t, std::less<>> tensor_index;
};

namespace {

[[noreturn]] void key_fail(const std::string& path, std::string_view key, const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "GGUF " + path + ": metadata key '" + detail::printable(key) + "' " + what,
              {.op = "gguf"},
              {"check that the file is the model you meant (print its metadata with find()/metadata())"});
}

// Runs a GgufValue conversion, naming the key and file when it refuses.
template <class F>
auto converted(const std::string& path, std::string_view key, F&& convert) {
  try {
    return convert();
  } catch (const Error& e) {
    key_fail(path, key, "cannot be read: " + e.message());
  }
}

const GgufValue& array_of(const std::string& path, std::string_view key, const GgufValue& v) {
  if (v.type != GgufType::Array) key_fail(path, key, "is a " + std::string(gguf_type_name(v.type)) + ", not an array");
  return v;
}

}  // namespace

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.s_ = std::make_shared<const State>(path, detail::map_file(path));
  return f;
}

GgufFile GgufFile::parse(std::span<const std::byte> bytes, std::string name) {
  GgufFile f;
  f.s_ = std::make_shared<const State>(std::move(name), detail::copy_bytes(bytes));
  return f;
}

const std::string& GgufFile::path() const { return s_->path; }
std::uint32_t GgufFile::version() const { return s_->contents.version; }
std::size_t GgufFile::alignment() const { return s_->contents.alignment; }
std::size_t GgufFile::data_offset() const { return s_->contents.data_offset; }
std::size_t GgufFile::file_size() const { return s_->bytes.bytes.size(); }

const std::vector<std::pair<std::string, GgufValue>>& GgufFile::metadata() const { return s_->contents.metadata; }

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = s_->key_index.find(key);
  return it == s_->key_index.end() ? nullptr : &s_->contents.metadata[it->second].second;
}

const GgufValue& GgufFile::at(std::string_view key) const {
  if (const auto* v = find(key)) return *v;
  key_fail(s_->path, key, "is missing");
}

std::int64_t GgufFile::get_int(std::string_view key) const {
  const auto& v = at(key);
  return converted(s_->path, key, [&] { return v.as_int(); });
}

std::int64_t GgufFile::get_int(std::string_view key, std::int64_t fallback) const {
  return find(key) ? get_int(key) : fallback;
}

double GgufFile::get_float(std::string_view key) const {
  const auto& v = at(key);
  return converted(s_->path, key, [&] { return v.as_float(); });
}

double GgufFile::get_float(std::string_view key, double fallback) const {
  return find(key) ? get_float(key) : fallback;
}

bool GgufFile::get_bool(std::string_view key, bool fallback) const {
  const auto* v = find(key);
  return v ? converted(s_->path, key, [&] { return v->as_bool(); }) : fallback;
}

std::string GgufFile::get_string(std::string_view key) const {
  const auto& v = at(key);
  return converted(s_->path, key, [&] { return v.as_string(); });
}

std::string GgufFile::get_string(std::string_view key, std::string fallback) const {
  return find(key) ? get_string(key) : fallback;
}

std::vector<std::string> GgufFile::get_strings(std::string_view key) const {
  const auto& v = array_of(s_->path, key, at(key));
  std::vector<std::string> out;
  out.reserve(v.array.size());
  for (const auto& e : v.array) out.push_back(converted(s_->path, key, [&] { return e.as_string(); }));
  return out;
}

std::vector<float> GgufFile::get_floats(std::string_view key) const {
  const auto& v = array_of(s_->path, key, at(key));
  std::vector<float> out;
  out.reserve(v.array.size());
  for (const auto& e : v.array)
    out.push_back(static_cast<float>(converted(s_->path, key, [&] { return e.as_float(); })));
  return out;
}

std::vector<std::int64_t> GgufFile::get_ints(std::string_view key) const {
  const auto& v = array_of(s_->path, key, at(key));
  std::vector<std::int64_t> out;
  out.reserve(v.array.size());
  for (const auto& e : v.array) out.push_back(converted(s_->path, key, [&] { return e.as_int(); }));
  return out;
}

const std::vector<GgufTensorInfo>& GgufFile::tensors() const { return s_->contents.tensors; }

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = s_->tensor_index.find(name);
  return it == s_->tensor_index.end() ? nullptr : &s_->contents.tensors[it->second];
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name) const {
  if (const auto* t = find_tensor(name)) return *t;
  throw Error(ErrorCode::InvalidArgument,
              "GGUF " + s_->path + " has no tensor '" + detail::printable(name) + "' (it has " +
                  std::to_string(s_->contents.tensors.size()) + " tensors)",
              {.op = "gguf"},
              {"check the tensor name against tensors(); names follow llama.cpp (blk.N.attn_q.weight)"});
}

std::span<const std::byte> GgufFile::tensor_data(const GgufTensorInfo& t) const {
  // `t` may come from another file; its span must still lie inside this one.
  const std::size_t data_size = file_size() - data_offset();
  if (t.offset > data_size || t.nbytes > data_size - t.offset)
    throw Error(ErrorCode::InvalidArgument,
                "GGUF " + s_->path + ": tensor '" + detail::printable(t.name) + "' (" + std::to_string(t.nbytes) +
                    " bytes at data offset " + std::to_string(t.offset) + ") is not inside this file",
                {.op = "gguf"}, {"pass a tensor info from this file's tensors()"});
  return s_->bytes.bytes.subspan(data_offset() + static_cast<std::size_t>(t.offset), t.nbytes);
}

void GgufFile::read_tensor_data(const GgufTensorInfo& t, void* dst) const {
  const auto span = tensor_data(t);  // checks that t lies inside this file
  detail::read_bytes(s_->bytes, s_->path, static_cast<std::size_t>(span.data() - s_->bytes.bytes.data()), span.size(),
                     dst);
}

std::shared_ptr<const void> GgufFile::keepalive() const { return s_; }

}  // namespace torsh::model
