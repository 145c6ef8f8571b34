#pragma once
// SHA-256 (FIPS 180-4), for the kernel cache's keys and its entries'
// integrity check: a collision-resistant name for (source, options, device...).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace torsh::detail {

class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::uint8_t> data);
  void update(std::string_view s) { update({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}); }
  std::array<std::uint8_t, 32> digest();  // ends the hash; the object is spent

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view s);
std::string hex(std::span<const std::uint8_t> bytes);

}  // namespace torsh::detail
