#pragma once
// A bounds-checked little-endian reader over a GGUF file's bytes. Every read
// checks the remaining length first, so a truncated or hostile file fails with
// an error naming the file and the byte offset instead of reading past the end.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace torsh::model::detail {

inline constexpr std::string_view kCorruptFileAdvice =
    "the file is truncated or corrupt: fetch it again and check its SHA-256 (scripts/fetch-model.sh does)";

// InvalidArgument "<file>: byte <offset>: <what>" with `advice` as the suggestion.
[[noreturn]] void gguf_fail(const std::string& file, std::uint64_t offset, const std::string& what,
                            std::string_view advice = kCorruptFileAdvice);

class ByteCursor {
 public:
  ByteCursor(std::span<const std::byte> bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  const std::string& file() const { return file_; }

  [[noreturn]] void fail_at(std::uint64_t at, const std::string& what,
                            std::string_view advice = kCorruptFileAdvice) const {
    gguf_fail(file_, at, what, advice);
  }

  // Fails unless `n` more bytes are left; `what` names what was being read.
  void need(std::uint64_t n, std::string_view what) const {
    if (n > remaining())
      fail_at(pos_, "file ends while reading " + std::string(what) + " (" + std::to_string(n) + " bytes needed, " +
                        std::to_string(remaining()) + " left)");
  }

  // An unsigned little-endian integer of sizeof(T) bytes, assembled byte by byte
  // so the host's byte order does not matter.
  template <class T>
  T read_le(std::string_view what) {
    need(sizeof(T), what);
    std::uint64_t v = 0;
    for (std::size_t k = 0; k < sizeof(T); ++k)
      v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(bytes_[pos_ + k])) << (8 * k);
    pos_ += sizeof(T);
    return static_cast<T>(v);
  }
  std::uint8_t u8(std::string_view what) { return read_le<std::uint8_t>(what); }
  std::uint16_t u16(std::string_view what) { return read_le<std::uint16_t>(what); }
  std::uint32_t u32(std::string_view what) { return read_le<std::uint32_t>(what); }
  std::uint64_t u64(std::string_view what) { return read_le<std::uint64_t>(what); }

  std::span<const std::byte> take(std::uint64_t n, std::string_view what) {
    need(n, what);
    auto out = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }

  // A GGUF string: u64 byte length, then the bytes (no terminator).
  std::string string(std::string_view what) {
    const std::size_t at = pos_;
    const std::uint64_t len = u64(what);
    if (len > remaining())
      fail_at(at, std::string(what) + " claims " + std::to_string(len) + " bytes but only " +
                      std::to_string(remaining()) + " are left in the file");
    auto s = take(len, what);
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }

 private:
  std::span<const std::byte> bytes_;
  const std::string& file_;
  std::size_t pos_ = 0;
};

}  // namespace torsh::model::detail
